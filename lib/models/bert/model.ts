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
import { fusedAddLayerNorm } from '../../ops/layer-norm.js';
import { fusedBiasGelu, hasBiasGeluKernel } from '../../ops/bias-gelu.js';
import { blockedAttention } from '../../ops/blocked-attention.js';
import { fusedAttention } from '../../ops/fused-attention.js';
import { checkpoint, replayingDropout, trainableUnder } from '../../ops/checkpoint.js';
import { backendCapabilities, tf } from '../../backend/index.js';
import { InputError } from '../../util/errors.js';
import type { BertConfig } from './config.js';
import type { RawTensor } from './weights.js';
import { TransformerModel } from '../transformer-model.js';
import { InferenceWeights, type DenseWeight } from './inference-weights.js';
import type { AttentionKind, ForwardOptions, ModelOutput, TextModel, TokenBatch } from '../types.js';

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

/** Parameters, size getters, the dropout counter and disposal come from TransformerModel (../transformer-model.ts). */
export class BertModel extends TransformerModel<BertConfig> implements TextModel {
  readonly hasPooler: boolean;
  /** Inference copies of the dense weights (./inference-weights.ts). */
  private readonly inference = new InferenceWeights();

  constructor(config: BertConfig, weights: Map<string, RawTensor>, dropoutSeed = 0) {
    super('bert', config, weights, dropoutSeed);
    this.hasPooler = this.params.has('pooler.dense.weight');
  }

  /** BERT's hidden and attention dropout both take the run's probability. */
  protected override applyDropout(p: number): void {
    this.config.hiddenDropout = p;
    this.config.attentionDropout = p;
  }

  /**
   * x @ W^T + b with a PyTorch-layout [out, in] weight. `dense` gives W as stored, for matMul's
   * transposeB where that is free or for an explicit transpose here, or W^T already transposed
   * (inference copies): the same numbers either way, since a transpose only moves values.
   */
  private linear(x: tf.Tensor, prefix: string, dense: DenseWeight): tf.Tensor {
    // In a scope of its own: x Wᵀ before the bias (and Wᵀ where it is transposed here) is freed right away.
    return tf.tidy(() => {
      const { w, transposed } = dense(prefix);
      const b = this.p(`${prefix}.bias`);
      const shape = x.shape;
      const x2 = tf.reshape(x, [-1, shape[shape.length - 1]]);
      let xw: tf.Tensor;
      if (transposed) xw = tf.matMul(x2, w);
      else xw = matMulTransposesFree() ? tf.matMul(x2, w, false, true) : tf.matMul(x2, tf.transpose(w));
      const y = tf.add(xw, b);
      const out = (transposed ? w.shape[1] : w.shape[0]) as number;
      return tf.reshape(y, [...shape.slice(0, -1), out]);
    });
  }

  /** One kernel on backends with a fused LayerNorm (cuda), the same tfjs ops as before elsewhere. */
  private layerNorm(x: tf.Tensor, prefix: string): tf.Tensor {
    return fusedLayerNorm(x, this.p(`${prefix}.weight`), this.p(`${prefix}.bias`), this.config.layerNormEps);
  }

  /** GELU(linear(x)) with the bias add inside the GELU kernel (fusedBiasGelu). */
  private linearGelu(x: tf.Tensor, prefix: string, dense: DenseWeight): tf.Tensor {
    return tf.tidy(() => {
      const { w, transposed } = dense(prefix);
      const shape = x.shape;
      const x2 = tf.reshape(x, [-1, shape[shape.length - 1]]);
      const xw = transposed ? tf.matMul(x2, w) : matMulTransposesFree() ? tf.matMul(x2, w, false, true) : tf.matMul(x2, tf.transpose(w));
      const out = (transposed ? w.shape[1] : w.shape[0]) as number;
      return tf.reshape(fusedBiasGelu(xw, this.p(`${prefix}.bias`)), [...shape.slice(0, -1), out]);
    });
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
    return fusedDropout(x, rate, this.nextDropoutSeed());
  }

  /**
   * LayerNorm(dropout(x) + residual), the end of each BERT sublayer (hidden dropout only while
   * training): one kernel on cuda (fusedAddLayerNorm), dropout-add and LayerNorm elsewhere.
   */
  private residualLayerNorm(x: tf.Tensor, residual: tf.Tensor, training: boolean, prefix: string): tf.Tensor {
    const rate = this.config.hiddenDropout;
    const dropout = training && rate > 0 ? { rate, seed: this.nextDropoutSeed() } : undefined;
    return fusedAddLayerNorm(x, residual, this.p(`${prefix}.weight`), this.p(`${prefix}.bias`), this.config.layerNormEps, dropout);
  }

  /**
   * Runs the encoder on a tokenised batch. Tensors returned are owned by the caller.
   *
   * Training (or any call while tfjs records gradients) runs each layer in its own tf.tidy, so a
   * layer's intermediates the gradient tape did not save are freed when the layer ends; with
   * `checkpointing` each layer is one recomputed op (../../ops/checkpoint.ts) that keeps only its
   * input, `attention: 'blocked'` keeps no [T, T] scores (../../ops/blocked-attention.ts), and
   * `attention: 'fused'` runs each layer's attention as one kernel on cuda (../../ops/fused-attention.ts).
   * Inference runs one layer at a time too (see inferenceForward): the same ops in the same order,
   * so the numbers are identical bit for bit, at a peak of the weights plus about one layer's
   * activations.
   */
  forward(batch: TokenBatch, opts: ForwardOptions = {}): BertOutput {
    const cfg = this.config;
    if (batch.seqLen > cfg.maxPositions) {
      throw new InputError(`sequence length ${batch.seqLen} exceeds max_position_embeddings ${cfg.maxPositions}; tokenise with maxLength <= ${cfg.maxPositions}`);
    }
    const training = opts.training ?? false;
    if (!training && !tf.engine().isTapeOn()) return this.inferenceForward(batch, opts);
    // Training replaces the weights step by step: the inference copies would only be stale memory.
    this.inference.clear();
    const dense: DenseWeight = (prefix) => ({ w: this.p(`${prefix}.weight`), transposed: false });
    const attention = opts.attention ?? 'plain';
    return tf.tidy(() => {
      let h = tf.tidy(() => this.embeddings(batch, training));
      const additiveMask = tf.tidy(() => this.additiveMask(batch));
      const hidden: tf.Tensor3D[] = opts.outputHiddenStates ? [h as tf.Tensor3D] : [];
      for (let l = 0; l < cfg.numLayers; l++) {
        const layer = replayingDropout(this, (x: tf.Tensor, mask: tf.Tensor) =>
          tf.tidy(() => this.feedForwardBlock(this.attentionBlock(x, mask, batch, l, training, dense, attention), l, training, dense)),
        );
        h = opts.checkpointing ? checkpoint(layer, h, trainableUnder(this.params, `encoder.layer.${l}.`), [additiveMask]) : layer(h, additiveMask);
        if (opts.outputHiddenStates) hidden.push(h as tf.Tensor3D);
      }
      return this.output(h, hidden, batch.batch, dense) as unknown as tf.TensorContainerObject;
    }) as unknown as BertOutput;
  }

  /**
   * The forward pass without gradients, one layer at a time: each layer (and within it the
   * attention and the feed-forward block) runs in its own tf.tidy, and a layer's input is released
   * as soon as the next layer has its output, so only the weights, the current hidden states and
   * one block's intermediates are alive at once. Dense weights are read through `InferenceWeights`
   * (transposed once, not on every call, where the backend's matMul wants them transposed).
   */
  private inferenceForward(batch: TokenBatch, opts: ForwardOptions): BertOutput {
    const cfg = this.config;
    const dense = this.inference.dense(this.params, this.config);
    let h = tf.tidy(() => this.embeddings(batch, false));
    const additiveMask = tf.tidy(() => this.additiveMask(batch));
    const hidden: tf.Tensor3D[] = opts.outputHiddenStates ? [h as tf.Tensor3D] : [];
    try {
      for (let l = 0; l < cfg.numLayers; l++) {
        // 'fused' is honoured at inference too; 'blocked' only saves training memory, so inference keeps plain attention.
        const a = tf.tidy(() => this.attentionBlock(h, additiveMask, batch, l, false, dense, opts.attention === 'fused' ? 'fused' : 'plain'));
        if (!opts.outputHiddenStates) h.dispose();
        h = tf.tidy(() => this.feedForwardBlock(a, l, false, dense));
        a.dispose();
        if (opts.outputHiddenStates) hidden.push(h as tf.Tensor3D);
        this.onLayerDone?.(l);
      }
    } finally {
      additiveMask.dispose();
    }
    const out = tf.tidy(() => this.output(h, [], batch.batch, dense) as unknown as tf.TensorContainerObject) as unknown as BertOutput;
    return { ...out, hiddenStates: hidden };
  }

  /**
   * Called after each layer of an inference forward with the layer's index: how a test or a
   * benchmark watches live memory across layers (tf.memory()). Not called in training.
   */
  onLayerDone?: (layer: number) => void;

  /** Embeddings: LayerNorm(word[ids] + position[0..T) + type[types]), then dropout in training. */
  private embeddings(batch: TokenBatch, training: boolean): tf.Tensor {
    const { batch: B, seqLen: T } = batch;
    const ids = tf.tensor2d(batch.inputIds, [B, T], 'int32');
    const types = tf.tensor2d(batch.tokenTypeIds, [B, T], 'int32');
    const words = tf.gather(this.p('embeddings.word_embeddings.weight'), ids);
    const positions = tf.gather(this.p('embeddings.position_embeddings.weight'), tf.range(0, T, 1, 'int32'));
    const typeEmb = tf.gather(this.p('embeddings.token_type_embeddings.weight'), types);
    const h = tf.add(tf.add(words, positions), typeEmb);
    return this.dropout(this.layerNorm(h, 'embeddings.LayerNorm'), this.config.hiddenDropout, training);
  }

  /** [B, 1, 1, T]: 0 for real keys, a large negative for padding. */
  private additiveMask(batch: TokenBatch): tf.Tensor {
    const { batch: B, seqLen: T } = batch;
    const mask = tf.tensor2d(batch.attentionMask, [B, T], 'int32');
    return tf.reshape(tf.mul(tf.sub(1, tf.cast(mask, 'float32')), MASK_NEGATIVE), [B, 1, 1, T]);
  }

  /** Self-attention of layer l, its output projection, residual and LayerNorm. */
  private attentionBlock(h: tf.Tensor, additiveMask: tf.Tensor, batch: TokenBatch, l: number, training: boolean, dense: DenseWeight, attention: AttentionKind = 'plain'): tf.Tensor {
    const cfg = this.config;
    const { batch: B, seqLen: T } = batch;
    const p = `encoder.layer.${l}.`;
    const H = cfg.numHeads;
    const D = cfg.hiddenSize / H;
    const scale = 1 / Math.sqrt(D);
    // q, v: [B, H, T, D]. k: [B, H, T, D] read transposed by matMul where that is free (and a
    // [0,2,1,3] transpose moves whole D-rows), else transposed directly to [B, H, D, T].
    // Each projection and its head split in a scope of its own: the projection is freed once split.
    const heads = (module: string, perm: number[]) => tf.tidy(() => tf.transpose(tf.reshape(this.linear(h, `${p}attention.self.${module}`, dense), [B, T, H, D]), perm));
    const q = heads('query', [0, 2, 1, 3]);
    if (attention === 'blocked' || attention === 'fused') {
      const kb = heads('key', [0, 2, 1, 3]);
      const vb = heads('value', [0, 2, 1, 3]);
      const rate = cfg.attentionDropout;
      const dropout = training && rate > 0 ? { rate, seed: this.nextDropoutSeed() } : undefined;
      // 'fused': one kernel on cuda (the additive mask [B, 1, 1, T] is its padding mask), plain attention elsewhere.
      const attend = attention === 'fused' ? fusedAttention : blockedAttention;
      const ctxBlocked = tf.reshape(tf.transpose(attend(q, kb, vb, additiveMask, { scale, dropout }), [0, 2, 1, 3]), [B, T, cfg.hiddenSize]);
      return this.residualLayerNorm(this.linear(ctxBlocked, `${p}attention.output.dense`, dense), h, training, `${p}attention.output.LayerNorm`);
    }
    const keysTransposedByMatMul = matMulTransposesFree();
    const k = heads('key', keysTransposedByMatMul ? [0, 2, 1, 3] : [0, 2, 3, 1]);
    const v = heads('value', [0, 2, 1, 3]);
    const probs = tf.tidy(() => {
      const scores = tf.add(tf.mul(tf.matMul(q, k, false, keysTransposedByMatMul), scale), additiveMask);
      return this.dropout(tf.softmax(scores, -1), cfg.attentionDropout, training);
    });
    const ctx = tf.tidy(() => tf.reshape(tf.transpose(tf.matMul(probs, v), [0, 2, 1, 3]), [B, T, cfg.hiddenSize]));
    return this.residualLayerNorm(this.linear(ctx, `${p}attention.output.dense`, dense), h, training, `${p}attention.output.LayerNorm`);
  }

  /** Feed-forward of layer l (intermediate, activation, output), residual and LayerNorm. */
  private feedForwardBlock(a: tf.Tensor, l: number, training: boolean, dense: DenseWeight): tf.Tensor {
    const p = `encoder.layer.${l}.`;
    // erf-GELU on cuda: the bias add and the activation as one kernel (the same numbers; elsewhere the two ops).
    const inter = this.config.hiddenAct === 'gelu' && hasBiasGeluKernel() ? this.linearGelu(a, `${p}intermediate.dense`, dense) : this.activation(this.linear(a, `${p}intermediate.dense`, dense));
    return this.residualLayerNorm(this.linear(inter, `${p}output.dense`, dense), a, training, `${p}output.LayerNorm`);
  }

  /** The result object: last hidden state, the hidden states asked for, and the pooler output. */
  private output(h: tf.Tensor, hidden: tf.Tensor3D[], B: number, dense: DenseWeight): BertOutput {
    const result: BertOutput = { lastHiddenState: h as tf.Tensor3D, hiddenStates: hidden };
    if (this.hasPooler) {
      const first = tf.reshape(tf.slice(h, [0, 0, 0], [B, 1, this.config.hiddenSize]), [B, this.config.hiddenSize]);
      result.poolerOutput = tf.tanh(this.linear(first, 'pooler.dense', dense)) as tf.Tensor2D;
    }
    return result;
  }

  /**
   * Bytes of tensors an inference forward of [batch, seqLen] holds at its peak beyond the weights
   * (and beyond the inference copies of the weights), as tf.memory() counts them (it counts a
   * reshaped view as bytes of its own, so real memory is lower): the hidden states carried between
   * layers plus the larger of one attention block's and one feed-forward block's intermediates.
   * Counted op by op from attentionBlock/feedForwardBlock on the cpu backend (per projection:
   * reshape, matMul, bias add, reshape, reshape, transpose; scores: matMul, scale, mask, softmax;
   * LayerNorm: cast, centred, squared, then scaled, shifted) and checked against tf.profile by
   * test/bert-inference-memory.test.ts. With outputHiddenStates every layer's output stays alive
   * too. What the tfjs engine splits a batch by (lib/embed/engines/tfjs-engine.ts).
   */
  inferenceActivationBytes(batch: number, seqLen: number, outputHiddenStates = false): number {
    const cfg = this.config;
    const n = batch * seqLen;
    const hid = n * cfg.hiddenSize;
    const scores = batch * cfg.numHeads * seqLen * seqLen;
    const inter = n * cfg.intermediateSize;
    const attention = 31 * hid + 4 * scores;
    const feedForward = 8 * inter + 2 * hid;
    const carried = 2 * hid + n + (outputHiddenStates ? (cfg.numLayers + 1) * hid : 0);
    return 4 * (carried + Math.max(attention, feedForward));
  }

  override dispose(): void {
    this.inference.clear();
    super.dispose();
  }
}
