/**
 * The OPT decoder (Zhang et al. 2022, "OPT: Open Pre-trained Transformer Language Models") in
 * tfjs-core ops, computing what HF `OPTForCausalLM` computes (transformers' modeling_opt.py, eager
 * attention):
 *
 *   positions = cumsum(mask) · mask − 1                  (per row; padding −1)
 *   h = project_in(embed_tokens[ids]) + embed_positions[positions + 2]    (project_in only when
 *                                                         word_embed_proj_dim ≠ hidden_size)
 *   pre-LN layer (every OPT but 350m):
 *     h = h + dropout(out_proj(attn(LN₁(h))));   h = h + dropout(fc2(relu(fc1(LN₂(h)))))
 *   post-LN layer (do_layer_norm_before false, OPT-350m):
 *     h = LN₁(h + dropout(out_proj(attn(h))));   h = LN₂(h + dropout(fc2(relu(fc1(h)))))
 *   attn(x) = softmax((q_proj(x) · head_dim^−½) k_proj(x)ᵀ + causal/padding mask) v_proj(x)
 *             (the query is scaled before the product, as HF does; attention dropout on the probabilities)
 *   last_hidden_state = project_out(final_layer_norm(h))  (each only where the config has it)
 *   logits = last_hidden_state · embed_tokensᵀ           (the LM head is tied to the embeddings)
 *
 * `hiddenStates` are HF's: the input of every layer (the first is the embeddings) and then
 * last_hidden_state; the last layer's raw output is not among them. With project_out the last
 * entry is word_embed_proj_dim wide, narrower than the others, and `hiddenSize` (the width that
 * sentence encoders pool) is word_embed_proj_dim.
 *
 * Positions come from the attention mask (OPT's learned positions are offset by 2: the first real
 * token reads row 2), so a left-padded row computes what the same text computes alone, and a
 * KV-cache step continues each row's numbering. Outputs at padding positions are not defined
 * (HF's eager path, CUDA SDPA and this code each give them something different); only positions
 * whose mask is 1 mean anything.
 *
 * In training, dropout follows the config (`dropout` on the attention and feed-forward outputs,
 * `attention_dropout` on the probabilities), and LayerDrop skips a layer with probability
 * `layerdrop`; all draws come from the model's seeded dropout counter. With `checkpointing` each
 * layer is one op that keeps only its input and is recomputed in backward (../../ops/checkpoint.ts;
 * the same gradients, for one more forward pass). Parameters are tf.Variables
 * under OPTForCausalLM's names (./weights.ts); linear layers of the decoder layers can carry
 * adapters (../adapters/: LoRA).
 */
import { backendCapabilities, tf } from '../../backend/index.js';
import { causalPaddingMask, groupedQueryAttention } from '../../ops/attention.js';
import { checkpoint, replayingDropout, trainableUnder } from '../../ops/checkpoint.js';
import { fusedDropout } from '../../ops/dropout.js';
import { fusedLayerNorm } from '../../ops/layer-norm.js';
import { mulberry32Uniform } from '../../util/mulberry32.js';
import { InputError } from '../../util/errors.js';
import { AdaptableTransformerModel } from '../adaptable-transformer-model.js';
import type { AdaptableModel, AdapterContext } from '../adapters/types.js';
import type { DecoderInput, DecoderOptions, DecoderOutput } from '../causal-decoder.js';
import type { FrozenBaseSpec } from '../frozen-base.js';
import type { InitialWeight } from '../transformer-model.js';
import type { ForwardOptions, ModelOutput, TokenBatch } from '../types.js';
import type { OptConfig } from './config.js';
import { OPT_PREFIX, optLinearModules } from './weights.js';

/** OPTLearnedPositionalEmbedding's offset: position p reads row p + 2. */
export const OPT_POSITION_OFFSET = 2;

/**
 * OPT's position ids of the last `queryLen` tokens of each row: cumsum(mask) · mask − 1 over the
 * row's `keyLen` tokens (cached ones first), so real tokens count 0, 1, 2, … and padding gets −1
 * (HF `OPTDecoder.forward`).
 */
export function optPositionIds(mask: Int32Array, batch: number, keyLen: number, queryLen: number): Int32Array {
  if (mask.length !== batch * keyLen) throw new Error(`attention mask has ${mask.length} entries, expected ${batch} × ${keyLen}`);
  const out = new Int32Array(batch * queryLen);
  for (let b = 0; b < batch; b++) {
    let seen = 0;
    for (let s = 0; s < keyLen; s++) {
      const real = mask[b * keyLen + s] !== 0;
      if (real) seen++;
      const t = s - (keyLen - queryLen);
      if (t >= 0) out[b * queryLen + t] = real ? seen - 1 : -1;
    }
  }
  return out;
}

export class OptModel extends AdaptableTransformerModel<OptConfig> implements AdaptableModel {
  /** `frozenBase`: the linear layers' weights stored in 16 or 4 bits as they load (../frozen-base.ts). */
  constructor(config: OptConfig, weights: ReadonlyMap<string, InitialWeight>, dropoutSeed = 0, frozenBase?: FrozenBaseSpec) {
    super('opt', config, weights, dropoutSeed, frozenBase && { spec: frozenBase, modules: optLinearModules(config) });
  }

  /**
   * The width of `lastHiddenState` and of the sentence embeddings pooled from it:
   * word_embed_proj_dim (equal to hidden_size except where project_out maps back, as in OPT-350m).
   * The decoder layers' own width is `config.hiddenSize`.
   */
  override get hiddenSize(): number {
    return this.config.wordEmbedProjDim;
  }

  get vocabSize(): number {
    return this.config.vocabSize;
  }

  /** OPT's two dropouts (outputs of attention and feed-forward; attention probabilities) take the run's probability. */
  protected override applyDropout(p: number): void {
    this.config.dropout = p;
    this.config.attentionDropout = p;
  }

  override linearModules(): Map<string, readonly [number, number]> {
    return optLinearModules(this.config);
  }

  /** The hidden states of a tokenised batch (no cache, no logits): TextModel's forward. */
  forward(batch: TokenBatch, opts: ForwardOptions = {}): ModelOutput {
    const out = this.decode({ inputIds: batch.inputIds, batch: batch.batch, seqLen: batch.seqLen, attentionMask: batch.attentionMask }, opts);
    return { lastHiddenState: out.lastHiddenState, hiddenStates: out.hiddenStates };
  }

  /** Logits at every position of a tokenised batch: [batch, seqLen, vocab]. */
  logits(batch: TokenBatch, opts: ForwardOptions = {}): tf.Tensor3D {
    const out = this.decode({ inputIds: batch.inputIds, batch: batch.batch, seqLen: batch.seqLen, attentionMask: batch.attentionMask }, { ...opts, logits: 'all' });
    tf.dispose([out.lastHiddenState, ...out.hiddenStates]);
    return out.logits as tf.Tensor3D;
  }

  /** LayerNorm `name` (without weight and bias when the config's LayerNorms are not affine). */
  private layerNorm(x: tf.Tensor, name: string): tf.Tensor {
    const cfg = this.config;
    if (cfg.layerNormAffine) return fusedLayerNorm(x, this.p(`${name}.weight`), this.p(`${name}.bias`), cfg.layerNormEps);
    const width = x.shape[x.shape.length - 1];
    return fusedLayerNorm(x, tf.ones([width]), tf.zeros([width]), cfg.layerNormEps);
  }

  /** x Wᵀ for the bias-free projections outside the layers (project_in, project_out, the tied LM head). */
  private project(x: tf.Tensor, weight: string): tf.Tensor {
    const w = this.p(weight);
    const shape = x.shape;
    const x2 = tf.reshape(x, [-1, shape[shape.length - 1]]);
    const y = backendCapabilities().matMulTransposeIsFree ? tf.matMul(x2, w, false, true) : tf.matMul(x2, tf.transpose(w));
    return tf.reshape(y, [...shape.slice(0, -1), w.shape[0]]);
  }

  private dropout(x: tf.Tensor, rate: number, training: boolean): tf.Tensor {
    return training && rate > 0 ? fusedDropout(x, rate, this.nextDropoutSeed()) : x;
  }

  /** Whether LayerDrop skips this layer in this training step (one seeded draw per layer). */
  private dropsLayer(training: boolean): boolean {
    if (!training || this.config.layerdrop <= 0) return false;
    return mulberry32Uniform(this.nextDropoutSeed())() < this.config.layerdrop;
  }

  /**
   * One decoder call over new tokens, optionally continuing a KV cache: hidden states, logits and
   * the extended cache as asked. The returned tensors belong to the caller; the input cache is
   * left as it was. Cached keys and values are [batch, heads, length, headDim].
   */
  decode(input: DecoderInput, opts: DecoderOptions = {}): DecoderOutput {
    const cfg = this.config;
    const { batch: B, seqLen: T } = input;
    const past = opts.cache?.length ?? 0;
    const S = past + T;
    if (input.inputIds.length !== B * T) throw new InputError(`input ids hold ${input.inputIds.length} tokens, expected batch ${B} × ${T}`);
    if (input.attentionMask.length !== B * S) {
      throw new InputError(`attention mask holds ${input.attentionMask.length} entries, expected batch ${B} × (${past} cached + ${T} new) tokens`);
    }
    for (let i = 0; i < input.inputIds.length; i++) {
      const id = input.inputIds[i];
      if (!(id >= 0 && id < cfg.vocabSize)) throw new InputError(`token id ${id} at index ${i} is outside the vocabulary [0, ${cfg.vocabSize})`);
    }
    if (opts.cache && (opts.cache.keys.length !== cfg.numLayers || opts.cache.keys[0].shape[0] !== B)) {
      throw new InputError(`KV cache of ${opts.cache.keys.length} layers × batch ${opts.cache.keys[0]?.shape[0]} does not fit ${cfg.numLayers} layers × batch ${B}`);
    }
    const positions = input.positions ?? optPositionIds(input.attentionMask, B, S, T);
    if (positions.length !== B * T) throw new InputError(`positions hold ${positions.length} entries, expected batch ${B} × ${T}`);
    const rows = new Int32Array(positions.length);
    for (let i = 0; i < positions.length; i++) {
      if (positions[i] >= cfg.maxPositions) {
        throw new InputError(`position ${positions[i]} exceeds the context length ${cfg.maxPositions} (max_position_embeddings); truncate the input`);
      }
      // Padding (position −1, or below) reads row 1 as in HF; its outputs are never used.
      rows[i] = Math.max(positions[i], -1) + OPT_POSITION_OFFSET;
    }
    const training = opts.training ?? false;
    const ctx = this.adapterContext(training);
    const wantLogits = opts.logits ?? 'none';
    const p = OPT_PREFIX;
    return tf.tidy(() => {
      const ids = tf.tensor2d(input.inputIds, [B, T], 'int32');
      let tokens: tf.Tensor = tf.gather(this.p(`${p}embed_tokens.weight`), ids);
      if (cfg.wordEmbedProjDim !== cfg.hiddenSize) tokens = this.project(tokens, `${p}project_in.weight`);
      let h: tf.Tensor = tf.add(tokens, tf.gather(this.p(`${p}embed_positions.weight`), tf.tensor2d(rows, [B, T], 'int32')));
      const hidden: tf.Tensor3D[] = [];
      const mask = causalPaddingMask(input.attentionMask, B, T, S);
      const keys: tf.Tensor4D[] = [];
      const values: tf.Tensor4D[] = [];
      for (let l = 0; l < cfg.numLayers; l++) {
        if (opts.outputHiddenStates) hidden.push(h as tf.Tensor3D);
        if (this.dropsLayer(training)) {
          if (opts.cache || opts.returnCache) throw new InputError('LayerDrop (training with layerdrop > 0) cannot keep a KV cache: a skipped layer has no keys and values');
          continue;
        }
        if (!opts.cache && !opts.returnCache) {
          // Each layer in its own scope, so what the gradient tape did not save is freed when the
          // layer ends (inference keeps only the layer's output: without it OPT-13B's prompt
          // batch held every layer's activations, 62 GB, in the rehearsal); keys and values are
          // not kept. With checkpointing, one recomputed op per layer that keeps only its input
          // (../../ops/checkpoint.ts), its dropout masks redrawn from the same seeds in backward.
          const fn = replayingDropout(this, (x: tf.Tensor, m: tf.Tensor) => tf.tidy(() => this.layer(x, l, m, input, opts, ctx, training).h));
          h = opts.checkpointing ? checkpoint(fn, h, trainableUnder(this.params, `${p}layers.${l}.`), [mask]) : fn(h, mask);
          continue;
        }
        const layer = this.layer(h, l, mask, input, opts, ctx, training);
        h = layer.h;
        keys.push(layer.k);
        values.push(layer.v);
      }
      if (cfg.finalLayerNorm) h = this.layerNorm(h, `${p}final_layer_norm`);
      if (cfg.wordEmbedProjDim !== cfg.hiddenSize) h = this.project(h, `${p}project_out.weight`);
      const last = h as tf.Tensor3D;
      if (opts.outputHiddenStates) hidden.push(last);
      const out: DecoderOutput = { lastHiddenState: last, hiddenStates: hidden };
      const head = `${p}embed_tokens.weight`;
      if (wantLogits === 'all') out.logits = this.project(last, head);
      else if (wantLogits === 'last') out.logits = this.project(tf.reshape(tf.slice(last, [0, T - 1, 0], [B, 1, cfg.wordEmbedProjDim]), [B, cfg.wordEmbedProjDim]), head);
      if (opts.returnCache) out.cache = { keys, values, length: S };
      return out as unknown as tf.TensorContainerObject;
    }) as unknown as DecoderOutput;
  }

  /** Decoder layer l (pre- or post-LN as configured); returns its output and its keys and values (cache included). */
  private layer(
    x: tf.Tensor,
    l: number,
    mask: tf.Tensor,
    input: DecoderInput,
    opts: DecoderOptions,
    ctx: AdapterContext,
    training: boolean,
  ): { h: tf.Tensor; k: tf.Tensor4D; v: tf.Tensor4D } {
    const cfg = this.config;
    const { batch: B, seqLen: T } = input;
    const { numHeads: H, headDim: D } = cfg;
    const lp = `${OPT_PREFIX}layers.${l}.`;
    const bias = cfg.enableBias;
    const split = (t: tf.Tensor) => tf.transpose(tf.reshape(t, [B, T, H, D]), [0, 2, 1, 3]);
    let h = x;
    const attnIn = cfg.doLayerNormBefore ? this.layerNorm(h, `${lp}self_attn_layer_norm`) : h;
    const q = split(tf.mul(this.linear(attnIn, `${lp}self_attn.q_proj`, ctx, bias), D ** -0.5));
    let k = split(this.linear(attnIn, `${lp}self_attn.k_proj`, ctx, bias));
    let v = split(this.linear(attnIn, `${lp}self_attn.v_proj`, ctx, bias));
    if (opts.cache) {
      k = tf.concat([opts.cache.keys[l], k], 2);
      v = tf.concat([opts.cache.values[l], v], 2);
    }
    const attnDropout = training && cfg.attentionDropout > 0 ? (probs: tf.Tensor) => fusedDropout(probs, cfg.attentionDropout, this.nextDropoutSeed()) : undefined;
    const attn = groupedQueryAttention(q, k, v, mask, { scale: 1, dropout: attnDropout });
    const merged = tf.reshape(tf.transpose(attn, [0, 2, 1, 3]), [B, T, cfg.hiddenSize]);
    h = tf.add(h, this.dropout(this.linear(merged, `${lp}self_attn.out_proj`, ctx, bias), cfg.dropout, training));
    if (!cfg.doLayerNormBefore) h = this.layerNorm(h, `${lp}self_attn_layer_norm`);
    const ffIn = cfg.doLayerNormBefore ? this.layerNorm(h, `${lp}final_layer_norm`) : h;
    const ff = this.linear(tf.relu(this.linear(ffIn, `${lp}fc1`, ctx, bias)), `${lp}fc2`, ctx, bias);
    h = tf.add(h, this.dropout(ff, cfg.dropout, training));
    if (!cfg.doLayerNormBefore) h = this.layerNorm(h, `${lp}final_layer_norm`);
    return { h, k: k as tf.Tensor4D, v: v as tf.Tensor4D };
  }
}
