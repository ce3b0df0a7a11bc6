/**
 * BERT encoder in tfjs-core ops, computing what HF `BertModel` computes:
 * embeddings (word + absolute position + token type) -> LayerNorm -> dropout, then per layer
 * self-attention with an additive padding mask, residual + LayerNorm, feed-forward with the
 * config's activation (erf-exact GELU for `gelu`), residual + LayerNorm; pooler = tanh(dense(h[:,0])).
 *
 * Parameters are tf.Variables under the canonical HF names (see ./weights.ts), so the same
 * object serves inference, training (tf.variableGrads) and saving. Dropout is active only when
 * `training` is true and draws its masks from a seeded counter, so training is reproducible on
 * the cpu backend.
 */
import { fusedDropout, fusedGelu, fusedLayerNorm } from '../../ops/index.js';
import { backendCapabilities, tf } from '../../backend/index.js';
import { InputError } from '../../util/errors.js';
import type { BertConfig } from './config.js';
import type { RawTensor } from './weights.js';
import { ModelParameters } from '../parameters.js';
import type { ForwardOptions, ModelOutput, TextModel, TokenBatch } from '../types.js';

/** What the encoder returns (the pooler output when the checkpoint has a pooler). */
export type BertOutput = ModelOutput;
export type { ForwardOptions };

/** Added to attention scores of padded keys; exp() of it underflows to exactly 0 in float32. */
const MASK_NEGATIVE = -1e9;

/**
 * Whether matMul reads W transposed for free on the active backend (lib/backend/capabilities.ts):
 * then BERT passes transposeB instead of running a Transpose kernel forward and backward.
 */
function matMulTransposesFree(): boolean {
  return backendCapabilities().matMulTransposeIsFree;
}

export class BertModel implements TextModel {
  readonly architecture = 'bert';
  readonly hasPooler: boolean;
  private readonly parameters = new ModelParameters('bert');
  /**
   * Dropout masks drawn so far. Each mask's seed derives from `dropoutSeed` and this count, so a
   * training checkpoint saves it and a resumed run draws the same masks as an uninterrupted one.
   */
  dropoutCounter = 0;

  constructor(
    readonly config: BertConfig,
    weights: Map<string, RawTensor>,
    /** Seed of the dropout masks (training only). */
    public dropoutSeed = 0,
  ) {
    for (const [name, t] of weights) this.parameters.create(name, t.data as Float32Array, t.shape);
    this.hasPooler = this.params.has('pooler.dense.weight');
  }

  get hiddenSize(): number {
    return this.config.hiddenSize;
  }

  get numLayers(): number {
    return this.config.numLayers;
  }

  get maxPositions(): number {
    return this.config.maxPositions;
  }

  get params(): ReadonlyMap<string, tf.Variable> {
    return this.parameters.all;
  }

  trainableParameters(): Map<string, tf.Variable> {
    return this.parameters.trainable();
  }

  setTrainable(select: (name: string) => boolean): void {
    this.parameters.setTrainable(select);
  }

  setDropout(p: number): void {
    if (!(p >= 0 && p < 1)) throw new RangeError(`dropout must be in [0, 1), got ${p}`);
    this.config.hiddenDropout = p;
    this.config.attentionDropout = p;
  }

  private p(name: string): tf.Variable {
    const v = this.params.get(name);
    if (!v) throw new Error(`BERT parameter '${name}' is not loaded`);
    return v;
  }

  /** x @ W^T + b with a PyTorch-layout [out, in] weight (see matMulTransposesFree for how W^T is formed). */
  private linear(x: tf.Tensor, prefix: string): tf.Tensor {
    const w = this.p(`${prefix}.weight`);
    const b = this.p(`${prefix}.bias`);
    const shape = x.shape;
    const x2 = tf.reshape(x, [-1, shape[shape.length - 1]]);
    const xw = matMulTransposesFree() ? tf.matMul(x2, w, false, true) : tf.matMul(x2, tf.transpose(w));
    const y = tf.add(xw, b);
    return tf.reshape(y, [...shape.slice(0, -1), w.shape[0]]);
  }

  /** One kernel on backends with a fused LayerNorm (cuda), the same tfjs ops as before elsewhere. */
  private layerNorm(x: tf.Tensor, prefix: string): tf.Tensor {
    return fusedLayerNorm(x, this.p(`${prefix}.weight`), this.p(`${prefix}.bias`), this.config.layerNormEps);
  }

  private activation(x: tf.Tensor): tf.Tensor {
    switch (this.config.hiddenAct) {
      case 'gelu':
        return fusedGelu(x);
      case 'gelu_new':
      case 'gelu_pytorch_tanh': {
        const inner = tf.mul(Math.sqrt(2 / Math.PI), tf.add(x, tf.mul(0.044715, tf.pow(x, 3))));
        return tf.mul(tf.mul(x, 0.5), tf.add(1, tf.tanh(inner)));
      }
      case 'relu':
        return tf.relu(x);
    }
  }

  private dropout(x: tf.Tensor, rate: number, training: boolean): tf.Tensor {
    if (!training || rate <= 0) return x;
    // On cuda one device kernel (mask from a counter-based generator); tf.dropout elsewhere.
    return fusedDropout(x, rate, this.dropoutSeed * 1_000_003 + this.dropoutCounter++);
  }

  /** Runs the encoder on a tokenised batch. Tensors returned are owned by the caller. */
  forward(batch: TokenBatch, opts: ForwardOptions = {}): BertOutput {
    const cfg = this.config;
    const { batch: B, seqLen: T } = batch;
    if (T > cfg.maxPositions) {
      throw new InputError(`sequence length ${T} exceeds max_position_embeddings ${cfg.maxPositions}; tokenise with maxLength <= ${cfg.maxPositions}`);
    }
    const training = opts.training ?? false;
    return tf.tidy(() => {
      const ids = tf.tensor2d(batch.inputIds, [B, T], 'int32');
      const types = tf.tensor2d(batch.tokenTypeIds, [B, T], 'int32');
      const mask = tf.tensor2d(batch.attentionMask, [B, T], 'int32');
      const words = tf.gather(this.p('embeddings.word_embeddings.weight'), ids);
      const positions = tf.gather(this.p('embeddings.position_embeddings.weight'), tf.range(0, T, 1, 'int32'));
      const typeEmb = tf.gather(this.p('embeddings.token_type_embeddings.weight'), types);
      let h = tf.add(tf.add(words, positions), typeEmb);
      h = this.dropout(this.layerNorm(h, 'embeddings.LayerNorm'), cfg.hiddenDropout, training);

      // [B, 1, 1, T]: 0 for real keys, a large negative for padding.
      const additiveMask = tf.reshape(tf.mul(tf.sub(1, tf.cast(mask, 'float32')), MASK_NEGATIVE), [B, 1, 1, T]);
      const hidden: tf.Tensor3D[] = opts.outputHiddenStates ? [h as tf.Tensor3D] : [];
      const H = cfg.numHeads;
      const D = cfg.hiddenSize / H;
      const scale = 1 / Math.sqrt(D);
      for (let l = 0; l < cfg.numLayers; l++) {
        const p = `encoder.layer.${l}.`;
        // q, v: [B, H, T, D]. k: [B, H, T, D] read transposed by matMul where that is free (and a
        // [0,2,1,3] transpose moves whole D-rows), else transposed directly to [B, H, D, T].
        const split = (t: tf.Tensor, perm: number[]) => tf.transpose(tf.reshape(t, [B, T, H, D]), perm);
        const q = split(this.linear(h, `${p}attention.self.query`), [0, 2, 1, 3]);
        const keysTransposedByMatMul = matMulTransposesFree();
        const k = split(this.linear(h, `${p}attention.self.key`), keysTransposedByMatMul ? [0, 2, 1, 3] : [0, 2, 3, 1]);
        const v = split(this.linear(h, `${p}attention.self.value`), [0, 2, 1, 3]);
        const scores = tf.add(tf.mul(tf.matMul(q, k, false, keysTransposedByMatMul), scale), additiveMask);
        const probs = this.dropout(tf.softmax(scores, -1), cfg.attentionDropout, training);
        const ctx = tf.reshape(tf.transpose(tf.matMul(probs, v), [0, 2, 1, 3]), [B, T, cfg.hiddenSize]);
        const attnOut = this.dropout(this.linear(ctx, `${p}attention.output.dense`), cfg.hiddenDropout, training);
        const a = this.layerNorm(tf.add(attnOut, h), `${p}attention.output.LayerNorm`);
        const inter = this.activation(this.linear(a, `${p}intermediate.dense`));
        const out = this.dropout(this.linear(inter, `${p}output.dense`), cfg.hiddenDropout, training);
        h = this.layerNorm(tf.add(out, a), `${p}output.LayerNorm`);
        if (opts.outputHiddenStates) hidden.push(h as tf.Tensor3D);
      }
      const result: BertOutput = { lastHiddenState: h as tf.Tensor3D, hiddenStates: hidden };
      if (this.hasPooler) {
        const first = tf.reshape(tf.slice(h, [0, 0, 0], [B, 1, cfg.hiddenSize]), [B, cfg.hiddenSize]);
        result.poolerOutput = tf.tanh(this.linear(first, 'pooler.dense')) as tf.Tensor2D;
      }
      return result as unknown as tf.TensorContainerObject;
    }) as unknown as BertOutput;
  }

  /** Number of parameters. */
  numParameters(): number {
    return this.parameters.count();
  }

  dispose(): void {
    this.parameters.dispose();
  }
}
