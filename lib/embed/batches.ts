/**
 * The batch loop every sentence encoder over a text model shares: encoded texts are sorted by
 * token count (longest first, so the first batch shows the worst memory case and padding waste
 * is minimal), padded batch by batch, run through the model without gradients, turned into rows
 * by the caller's heads (one [batch, dim] tensor per head) and put back in input order.
 */
import { tf } from '../backend/index.js';
import type { EncodedText, LoadedModel, ModelOutput, TokenBatch } from '../models/types.js';
import { Progress } from '../util/progress.js';
import { forwardToLayer } from './engines/tfjs-engine.js';
import type { InferenceEngine } from './engines/types.js';

/** What a head gets for one batch; tensors are disposed after the heads run. */
export interface BatchHeadInput {
  output: ModelOutput;
  /** [batch, seq] int32, 1 for real tokens. */
  mask: tf.Tensor2D;
  batch: TokenBatch;
}

export interface BatchLoopOptions {
  /** Runs the forward passes (./engines/: ONNX Runtime or tfjs); default the model's own forward. */
  engine?: Pick<InferenceEngine, 'run'>;
  batchSize: number;
  /** Width of each head's rows. */
  dims: readonly number[];
  /** Ask the model for every layer's hidden states. */
  hiddenStates: boolean;
  /** The heads read only slot 0 of the last hidden state (engines may skip the rest: EngineRunOptions). */
  firstTokenOnly?: boolean;
  /** The heads read the states at padding slots (EngineRunOptions). */
  padPositions?: boolean;
  /** Stop after this many layers: the heads' lastHiddenState is hidden_states[layers] (EngineRunOptions). */
  layers?: number;
  /** Progress line label, and whether to show it. */
  label: string;
  progress: boolean;
}

/** Runs `heads` on every batch; returns one row-major [texts, dims[k]] array per head. */
export async function embedInBatches(
  m: Pick<LoadedModel, 'model' | 'tokenizer'>,
  encoded: readonly EncodedText[],
  o: BatchLoopOptions,
  heads: (x: BatchHeadInput) => tf.Tensor2D[],
): Promise<Float32Array[]> {
  const out = o.dims.map((d) => new Float32Array(encoded.length * d));
  const order = encoded.map((_, i) => i).sort((a, b) => encoded[b].ids.length - encoded[a].ids.length || a - b);
  const progress = new Progress({ label: o.label, total: encoded.length, unit: 'texts', enabled: o.progress });
  for (let s = 0; s < order.length; s += o.batchSize) {
    const idx = order.slice(s, s + o.batchSize);
    const batch = m.tokenizer.pad(idx.map((i) => encoded[i]));
    const runOpts = { hiddenStates: o.hiddenStates, firstTokenOnly: o.firstTokenOnly, padPositions: o.padPositions, ...(o.layers !== undefined ? { layers: o.layers } : {}) };
    const computed = o.engine ? await o.engine.run(batch, runOpts) : undefined;
    const rows = tf.tidy(() => {
      const output = computed ?? forwardToLayer(m.model, batch, runOpts);
      const mask = tf.tensor2d(batch.attentionMask, [batch.batch, batch.seqLen], 'int32');
      return heads({ output, mask, batch });
    });
    if (computed) tf.dispose([computed.lastHiddenState, ...computed.hiddenStates, ...(computed.poolerOutput ? [computed.poolerOutput] : [])]);
    for (let k = 0; k < rows.length; k++) {
      const d = o.dims[k];
      if (rows[k].shape[1] !== d) throw new Error(`head ${k} produced rows of ${rows[k].shape[1]}, expected ${d}`);
      const values = (await rows[k].data()) as Float32Array;
      idx.forEach((orig, r) => out[k].set(values.subarray(r * d, (r + 1) * d), orig * d));
    }
    tf.dispose(rows);
    progress.tick(idx.length);
    // Let the event loop breathe between batches (progress output, notebook interrupts).
    await new Promise((r) => setImmediate(r));
  }
  return out;
}
