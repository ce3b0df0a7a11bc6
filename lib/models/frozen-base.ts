/**
 * Frozen bases built while loading (what QLoRA's `load_in_4bit` and transformers' 16-bit
 * `torch_dtype` do): every frozen linear weight goes from the checkpoint straight into its 16- or
 * 4-bit storage (../ops/frozen-linear.ts), one tensor at a time, as the model's constructor
 * consumes the weights in checkpoint order. Neither the host nor the device ever holds the float32
 * model: beside what the model keeps (the stored base, the float32 embeddings, norms and LM head)
 * there is at most the one float32 tensor being quantised.
 *
 * The numbers are those of loading in float32 and then calling `storeFrozenBase`: NF4 quantises
 * the same float32 values; a 16-bit base from a checkpoint already in that format takes its bit
 * patterns as they are (fp16 and bf16 survive float32 and back, so the bits are the same) without
 * even a float32 copy. test/frozen-base-load.test.ts checks both bit for bit on the tiny decoders.
 */
import { isShapeOnlyBackend } from '../backend/shape-only/index.js';
import { frozenWeightFromHalfBits, makeFrozenWeight, parseBaseStorage, type BaseStorage, type FrozenWeight } from '../ops/frozen-linear.js';
import { InputError } from '../util/errors.js';
import type { RawTensor, SafetensorsDtype } from './safetensors.js';

/** How a frozen base is stored while loading: a 16-bit format or NF4 (optionally double-quantised). */
export interface FrozenBaseSpec {
  format: Exclude<BaseStorage, 'fp32'>;
  doubleQuant?: boolean;
}

/** A frozen base to build while loading: the storage, and the linear weights it covers (`<module>.weight` -> [out, in]). */
export interface FrozenBaseLoad {
  spec: FrozenBaseSpec;
  modules: ReadonlyMap<string, readonly [number, number]>;
}

/**
 * A checkpoint tensor as a loader hands it to a model: shape and float32 values (read when
 * `data` is touched, for a lazy source), and, where a weight reader has them, the stored dtype and
 * the stored bytes.
 */
export interface SourceTensor {
  shape: number[];
  data: ArrayLike<number>;
  dtype?: SafetensorsDtype;
  readRaw?: () => RawTensor;
}

/** Checks a frozen-base spec from a caller (format name, doubleQuant only for NF4). */
export function checkFrozenBaseSpec(spec: FrozenBaseSpec): FrozenBaseSpec {
  const format = parseBaseStorage(spec.format);
  if (format === 'fp32') throw new InputError("a frozen base stored while loading is 'fp16', 'bf16' or 'nf4' ('fp32' is the plain load)");
  if (spec.doubleQuant && format !== 'nf4') throw new InputError(`double quantisation applies to an NF4 base, not ${format}`);
  return { format, ...(spec.doubleQuant ? { doubleQuant: true } : {}) };
}

/** The 16-bit checkpoint dtype a format keeps as it is. */
const OWN_DTYPE: Partial<Record<FrozenBaseSpec['format'], SafetensorsDtype>> = { fp16: 'F16', bf16: 'BF16' };

/**
 * The stored form of one frozen [out, in] weight from its checkpoint tensor. On the shape-only
 * backend no value is read (its tensors only have sizes).
 */
export function frozenWeightFromCheckpoint(name: string, t: SourceTensor, shape: readonly [number, number], spec: FrozenBaseSpec): FrozenWeight {
  if (t.shape.length !== 2 || t.shape[0] !== shape[0] || t.shape[1] !== shape[1]) {
    throw new InputError(`frozen base weight '${name}': checkpoint shape ${JSON.stringify(t.shape)}, the model expects [${shape}]`);
  }
  const dims: [number, number] = [shape[0], shape[1]];
  if (isShapeOnlyBackend()) return makeFrozenWeight(undefined, dims, spec.format, { doubleQuant: spec.doubleQuant });
  if (t.readRaw && t.dtype !== undefined && t.dtype === OWN_DTYPE[spec.format]) return frozenWeightFromHalfBits(t.readRaw().bytes, dims, spec.format as 'fp16' | 'bf16');
  return makeFrozenWeight(t.data, dims, spec.format, { doubleQuant: spec.doubleQuant });
}
