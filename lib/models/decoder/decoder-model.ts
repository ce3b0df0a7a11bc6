/**
 * The causal decoder base: what every decoder of the library (../llama/, ../opt/) computes alike,
 * written once, so that an architecture states only where its math differs:
 *
 *   positions = from the attention mask (../causal-decoder.ts; the architecture picks padding's
 *               number and checks them against its context length)
 *   h = embed(ids, positions)            LLaMA: token embeddings (rotary comes in the layers);
 *                                        OPT: project_in(token embeddings) + learned positions
 *   per layer l:  h = layer(h, l)        norm placement, attention, MLP (the architecture's)
 *   last_hidden_state = final(h)         LLaMA: RMSNorm; OPT: final LayerNorm, project_out
 *   logits = last_hidden_state · headᵀ   lm_head, or the tied token embeddings
 *
 * The base owns the input checks, HF's hidden-state list ([embeddings, layer 1, …, layer N−1,
 * last_hidden_state]), the KV cache in and out, skipping a layer (LayerDrop) and the per-layer
 * memory scoping: without a cache every layer runs in its own tf.tidy, so what the gradient tape
 * did not save is freed when the layer ends, and with `checkpointing` as one recomputed op that
 * keeps only the layer's input (../../ops/checkpoint.ts), its dropout masks redrawn from the same
 * seeds in backward. No architecture can leave that out: OPT once did, and a rehearsal of OPT-13B's
 * prompt batch held every layer's activations (62 GB of them; 135 GB in training).
 *
 * Parameters, adapters (LoRA), the adapted linear layer and the frozen base in 16 or 4 bits come
 * from ../adaptable-transformer-model.ts.
 */
import { backendCapabilities, tf } from '../../backend/index.js';
import { causalPaddingMask } from '../../ops/attention.js';
import { checkpoint, replayingDropout, trainableUnder } from '../../ops/checkpoint.js';
import { InputError } from '../../util/errors.js';
import { AdaptableTransformerModel } from '../adaptable-transformer-model.js';
import type { AdaptableModel, AdapterContext } from '../adapters/types.js';
import { positionsFromMask, type DecoderInput, type DecoderOptions, type DecoderOutput } from '../causal-decoder.js';
import type { TransformerDimensions } from '../transformer-model.js';
import type { AttentionKind, ForwardOptions, ModelOutput, TokenBatch } from '../types.js';

/** The config fields the decoder base reads; every decoder's parsed config has them. */
export interface DecoderDimensions extends TransformerDimensions {
  vocabSize: number;
  bosTokenId: number | null;
  eosTokenId: number[];
}

/** What every layer of one decoder call shares. */
export interface DecoderCall {
  batch: number;
  /** New tokens per row. */
  seqLen: number;
  /** Cached tokens followed by the new ones, per row. */
  keyLen: number;
  /** [batch, seqLen] positions of the new tokens. */
  positions: Int32Array;
  training: boolean;
  /** Training mode and the model's seeded dropout counter, for adapters and dropout. */
  ctx: AdapterContext;
  attention: AttentionKind;
}

/**
 * The tensors every layer of a call reads: the additive causal/padding mask and what the
 * architecture adds (LLaMA's rotary tables). A checkpointed layer takes them as inputs, so its
 * recomputation in backward reads the same tensors.
 */
export interface LayerInputs {
  mask: tf.Tensor;
  extra: tf.Tensor[];
}

/** A layer's keys and values: [batch, kvHeads, length, headDim], cached ones first. */
export interface LayerKeys {
  keys: tf.Tensor4D;
  values: tf.Tensor4D;
}

/** A layer's output and its keys and values (those of the cache included). */
export interface LayerOutput extends LayerKeys {
  h: tf.Tensor;
}

export abstract class DecoderModel<C extends DecoderDimensions> extends AdaptableTransformerModel<C> implements AdaptableModel {
  get vocabSize(): number {
    return this.config.vocabSize;
  }

  /** The parameter-name prefix of layer l (its trainable variables are the checkpointed op's). */
  protected abstract layerPrefix(l: number): string;

  /** Throws when a position (or the call's length) exceeds what the architecture holds. */
  protected abstract checkPositions(call: DecoderCall): void;

  /** The call's hidden state before the first layer, [batch, seqLen, width] (inside the call's tf.tidy). */
  protected abstract embed(ids: tf.Tensor2D, call: DecoderCall): tf.Tensor;

  /** Layer l of the call on h, continuing `past` (this layer's cached keys and values) when given. */
  protected abstract layer(h: tf.Tensor, l: number, inputs: LayerInputs, call: DecoderCall, past?: LayerKeys): LayerOutput;

  /** last_hidden_state from the last layer's output. */
  protected abstract finalHidden(h: tf.Tensor): tf.Tensor;

  /** The [vocab, width] matrix the logits are taken against. */
  protected abstract lmHeadWeight(): string;

  /** Positions of the new tokens from the mask when the caller gives none: padding numbered 1 (HF generate's numbering). */
  protected positionIds(mask: Int32Array, batch: number, keyLen: number, queryLen: number): Int32Array {
    return positionsFromMask(mask, batch, keyLen, queryLen);
  }

  /** Tensors the layers read beside the mask (inside the call's tf.tidy); none by default. */
  protected layerConstants(_call: DecoderCall): tf.Tensor[] {
    return [];
  }

  /** Whether this training step skips the next layer (LayerDrop); never by default. */
  protected skipsLayer(_call: DecoderCall): boolean {
    return false;
  }

  /** x Wᵀ with a bias-free [out, in] weight, for projections outside the layers (LM head, OPT's project_in/out). */
  protected project(x: tf.Tensor, weight: string): tf.Tensor {
    const w = this.p(weight);
    const shape = x.shape;
    const x2 = tf.reshape(x, [-1, shape[shape.length - 1]]);
    const y = backendCapabilities().matMulTransposeIsFree ? tf.matMul(x2, w, false, true) : tf.matMul(x2, tf.transpose(w));
    return tf.reshape(y, [...shape.slice(0, -1), w.shape[0]]);
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

  /**
   * One decoder call over new tokens, optionally continuing a KV cache: hidden states, logits and
   * the extended cache as asked. The returned tensors belong to the caller; the input cache is
   * left as it was.
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
    const positions = input.positions ?? this.positionIds(input.attentionMask, B, S, T);
    if (positions.length !== B * T) throw new InputError(`positions hold ${positions.length} entries, expected batch ${B} × ${T}`);
    const training = opts.training ?? false;
    const call: DecoderCall = { batch: B, seqLen: T, keyLen: S, positions, training, ctx: this.adapterContext(training), attention: opts.attention ?? 'plain' };
    this.checkPositions(call);
    const wantLogits = opts.logits ?? 'none';
    const cached = opts.cache !== undefined || opts.returnCache === true;
    return tf.tidy(() => {
      let h = this.embed(tf.tensor2d(input.inputIds, [B, T], 'int32'), call);
      const hidden: tf.Tensor3D[] = opts.outputHiddenStates ? [h as tf.Tensor3D] : [];
      const inputs: LayerInputs = { mask: causalPaddingMask(input.attentionMask, B, T, S), extra: this.layerConstants(call) };
      const keys: tf.Tensor4D[] = [];
      const values: tf.Tensor4D[] = [];
      for (let l = 0; l < cfg.numLayers; l++) {
        if (this.skipsLayer(call)) {
          if (cached) throw new InputError('LayerDrop (training with layerdrop > 0) cannot keep a KV cache: a skipped layer has no keys and values');
        } else if (cached) {
          const out = this.layer(h, l, inputs, call, opts.cache && { keys: opts.cache.keys[l], values: opts.cache.values[l] });
          h = out.h;
          keys.push(out.keys);
          values.push(out.values);
        } else {
          // Each layer in its own scope (keys and values not kept), with checkpointing one recomputed op.
          const fn = replayingDropout(this, (x: tf.Tensor, mask: tf.Tensor, ...extra: tf.Tensor[]) => tf.tidy(() => this.layer(x, l, { mask, extra }, call).h));
          const consts = [inputs.mask, ...inputs.extra];
          h = opts.checkpointing ? checkpoint(fn, h, trainableUnder(this.params, this.layerPrefix(l)), consts) : fn(h, ...consts);
        }
        if (opts.outputHiddenStates && l < cfg.numLayers - 1) hidden.push(h as tf.Tensor3D);
      }
      const last = this.finalHidden(h) as tf.Tensor3D;
      if (opts.outputHiddenStates) hidden.push(last);
      const out: DecoderOutput = { lastHiddenState: last, hiddenStates: hidden };
      const width = last.shape[2];
      if (wantLogits === 'all') out.logits = this.project(last, this.lmHeadWeight());
      else if (wantLogits === 'last') out.logits = this.project(tf.reshape(tf.slice(last, [0, T - 1, 0], [B, 1, width]), [B, width]), this.lmHeadWeight());
      if (opts.returnCache) out.cache = { keys, values, length: S };
      return out as unknown as tf.TensorContainerObject;
    }) as unknown as DecoderOutput;
  }
}
