/**
 * Model math that a backend may fuse into one kernel (lib/backend/fused-kernels.ts names them):
 * each function uses the backend's kernel when it has one and a composite of ordinary tfjs ops
 * otherwise. Models and the optimiser call these, never the kernels directly.
 */
export { fusedLayerNorm, layerNormComposite } from './layer-norm.js';
export { fusedGelu, geluComposite } from './gelu.js';
export { fusedDropout } from './dropout.js';
export { fusedAdamWUpdate, adamWComposite, type AdamWInputs, type AdamWOutputs } from './adamw-step.js';
export { rmsNorm } from './rms-norm.js';
export { silu, swiglu } from './swiglu.js';
export { applyRotary, rotaryTables, rotaryInverseFrequencies, type RotaryTables } from './rotary.js';
export { groupedQueryAttention, causalPaddingMask, type AttentionOptions } from './attention.js';
export { blockedAttention, type BlockedAttentionOptions } from './blocked-attention.js';
export { fusedAttention, usesFusedAttentionKernel, type FusedAttentionOptions } from './fused-attention.js';
export { checkpoint, replayingDropout, trainableUnder } from './checkpoint.js';
export { loraDelta, type LoraDropout } from './lora-delta.js';
export { frozenLinear, makeFrozenWeight, decodeFrozenWeight, frozenWeightBytes, disposeFrozenWeight, parseBaseStorage, BASE_STORAGES, type BaseStorage, type FrozenWeight } from './frozen-linear.js';
export { quantizeNf4, dequantizeNf4, dequantizeNf4Host, NF4_LEVELS, NF4_BLOCK, NF4_DQ_BLOCK, type Nf4Host, type Nf4Tensors } from './nf4.js';
export { encodeHalf, decodeHalf, fp16ToFloat, bf16ToFloat, floatToFp16, floatToBf16, type HalfFormat } from './half-float.js';
