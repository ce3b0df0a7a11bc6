/**
 * Embedding a prepared transfer task the way SentEval does: each split's rows, already in
 * SentEval's sorted order, go to the batcher in consecutive batches of `batchSize` (SentEval's
 * params.batch_size, default 128) and the batches are stacked into X (float64, as numpy
 * vstack of the batcher's outputs; a float32 encoder's values are widened exactly, as
 * scikit-learn's lbfgs path converts X to float64). MRPC embeds all sentences A, then all B,
 * and X is their pair features.
 *
 * A batcher is SentEval's contract: token lists in, one embedding per list out. Two are given:
 * `bowBatcher` (SentEval's bow.py, exact float64) and `batcherFromEncoder` (any SentenceEncoder;
 * the tokens joined by single spaces, as SimCSE's SentEval batcher does).
 *
 * Bad embeddings (NaN/infinite values, a wrong row count or a dimension that changes between
 * batches) are an InputError naming the task, the split, the row and the sample's file and line.
 */
import type { SentenceEncoder } from '../../embed/types.js';
import { InputError } from '../../util/errors.js';
import { bowEmbed, type WordVectors } from './bow.js';
import type { Matrix } from './matrix.js';
import { pairFeatures } from './pair-features.js';
import type { PreparedSplit, PreparedTask } from './tasks.js';

export interface EmbeddingBatch {
  data: Float64Array | Float32Array;
  rows: number;
  dim: number;
}

export type TransferBatcher = (batch: string[][]) => Promise<EmbeddingBatch> | EmbeddingBatch;

/** SentEval's bow.py batcher over a word-vector file (float64, bit for bit). */
export function bowBatcher(wv: WordVectors): TransferBatcher {
  return (batch) => ({ data: bowEmbed(wv, batch), rows: batch.length, dim: wv.dim });
}

/** Any sentence encoder as a SentEval batcher: `' '.join(tokens)` per sentence (SimCSE's batcher). */
export function batcherFromEncoder(encoder: SentenceEncoder): TransferBatcher {
  return async (batch) => encoder.encode(batch.map((t) => t.join(' ')));
}

export interface SplitMatrix {
  x: Matrix;
  y: Int32Array;
}

export interface TaskMatrices {
  splits: Record<string, SplitMatrix>;
  /** Embedding dimension (MRPC's X has twice as many columns). */
  dim: number;
}

export interface EmbedTaskOptions {
  batchSize?: number;
  log?: (line: string) => void;
}

async function embedRows(task: string, split: PreparedSplit, sentences: string[][], batcher: TransferBatcher, batchSize: number, which: string): Promise<Matrix> {
  const n = sentences.length;
  let dim = -1;
  let data = new Float64Array(0);
  const where = (r: number) => `${task} ${split.split}${which} row ${r} (${split.sources[r].file}:${split.sources[r].line})`;
  for (let start = 0; start < n; start += batchSize) {
    const batch = sentences.slice(start, start + batchSize);
    const e = await batcher(batch);
    if (e.rows !== batch.length || e.data.length !== e.rows * e.dim) {
      throw new InputError(`${where(start)}: the encoder returned ${e.rows} embeddings of dimension ${e.dim} (${e.data.length} values) for a batch of ${batch.length} sentences`);
    }
    if (dim < 0) {
      if (!(e.dim > 0)) throw new InputError(`${where(start)}: the encoder returned embeddings of dimension ${e.dim}`);
      dim = e.dim;
      data = new Float64Array(n * dim);
    } else if (e.dim !== dim) {
      throw new InputError(`${where(start)}: embedding dimension ${e.dim}, but earlier rows had ${dim}`);
    }
    for (let i = 0; i < e.data.length; i++) {
      const v = e.data[i];
      if (!Number.isFinite(v)) throw new InputError(`${where(start + Math.floor(i / dim))}: embedding value ${v} at dimension ${i % dim} (expected a finite number)`);
    }
    data.set(e.data, start * dim);
  }
  return { data, rows: n, cols: Math.max(dim, 0) };
}

/** X and y of every split of a prepared task. */
export async function embedTask(task: PreparedTask, batcher: TransferBatcher, o: EmbedTaskOptions = {}): Promise<TaskMatrices> {
  const batchSize = o.batchSize ?? 128;
  const splits: Record<string, SplitMatrix> = {};
  let dim = 0;
  for (const name of task.spec.splits) {
    const s = task.splits[name];
    o.log?.(`${task.spec.task} ${name}: embedding ${s.tokens.length} ${task.spec.pairs ? 'pairs' : 'sentences'}`);
    if (task.spec.pairs) {
      const a = await embedRows(task.spec.task, s, s.tokens, batcher, batchSize, ' sentence 1');
      const b = await embedRows(task.spec.task, s, s.tokensB ?? [], batcher, batchSize, ' sentence 2');
      splits[name] = { x: pairFeatures(a, b), y: s.labels };
      dim = a.cols;
    } else {
      const x = await embedRows(task.spec.task, s, s.tokens, batcher, batchSize, '');
      splits[name] = { x, y: s.labels };
      dim = x.cols;
    }
  }
  return { splits, dim };
}
