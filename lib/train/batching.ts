/**
 * From examples to token batches, in a reproducible order.
 *
 * An epoch visits the examples in file order, or in a permutation drawn from the run's seed and the
 * epoch number when `shuffle` is on. The permutation depends on nothing else, so a resumed run only
 * needs (epoch, batch index) to continue exactly where it stopped. Batches hold `batchSize`
 * examples; the last, smaller one is kept unless `dropLast`. Texts are tokenised once (max length,
 * special tokens included) and each batch is padded to its own longest row (dynamic padding).
 */
import type { LabelInputs } from '../losses/registry.js';
import type { EncodedText, TextTokenizer, TokenBatch } from '../models/types.js';
import { InputError } from '../util/errors.js';
import { rowsPerExample, type TrainingExamples } from './examples.js';
import { SeededRng } from './rng.js';

export interface BatchingOptions {
  /** Examples (pairs, triplets or sentences) per batch. */
  batchSize: number;
  maxLength: number;
  shuffle: boolean;
  seed: number;
  dropLast?: boolean;
}

export interface TrainingBatch {
  epoch: number;
  /** Index of this batch within its epoch. */
  index: number;
  /** Indices of its examples in the training set. */
  examples: Uint32Array;
  tokens: TokenBatch;
  /** Pairs: one label per pair; otherwise empty. */
  labels: number[];
  /** One key per row (the row's text), for the ISP / duplicate handling of in-batch negatives. */
  keys: string[];
  /** Non-padding tokens in the batch. */
  realTokens: number;
  /** What the objective reads of `labels` and `keys`, as host arrays of the batch's shape (set by the step: withLabelInputs in ./training-step.ts). */
  labelInputs?: LabelInputs;
}

/** Mixes the run seed and the epoch into the seed of that epoch's permutation. */
function epochSeed(seed: number, epoch: number): number {
  return (Math.imul(seed ^ 0x5bd1e995, 0x27d4eb2d) + Math.imul(epoch + 1, 0x165667b1)) >>> 0;
}

export class BatchPlan {
  readonly batchesPerEpoch: number;
  private readonly encoded = new Map<string, EncodedText>();
  private cachedEpoch = -1;
  private cachedOrder: Uint32Array = new Uint32Array(0);

  constructor(
    readonly data: TrainingExamples,
    private readonly tokenizer: TextTokenizer,
    readonly opts: BatchingOptions,
  ) {
    const n = data.items.length;
    if (!Number.isInteger(opts.batchSize) || opts.batchSize < 1) throw new InputError(`batch size must be a positive integer, got ${opts.batchSize}`);
    if (!Number.isInteger(opts.maxLength) || opts.maxLength < 2) throw new InputError(`max length must be an integer >= 2, got ${opts.maxLength}`);
    const unit = data.kind === 'pairs' ? 'pairs' : data.kind === 'triplets' ? 'triplets' : 'sentences';
    if (n < opts.batchSize) {
      throw new InputError(
        `training set '${data.name}' has ${n} ${unit}, fewer than one batch of ${opts.batchSize}; lower the batch size or add data`,
      );
    }
    this.batchesPerEpoch = opts.dropLast ? Math.floor(n / opts.batchSize) : Math.ceil(n / opts.batchSize);
  }

  /** Example order of an epoch. */
  order(epoch: number): Uint32Array {
    if (epoch !== this.cachedEpoch) {
      const n = this.data.items.length;
      this.cachedOrder = this.opts.shuffle ? new SeededRng(epochSeed(this.opts.seed, epoch)).permutation(n) : Uint32Array.from({ length: n }, (_, i) => i);
      this.cachedEpoch = epoch;
    }
    return this.cachedOrder;
  }

  private encode(text: string): EncodedText {
    let e = this.encoded.get(text);
    if (!e) {
      e = this.tokenizer.encode(text, null, this.opts.maxLength);
      this.encoded.set(text, e);
    }
    return e;
  }

  /** The texts of example i, in row order. */
  private rows(i: number): string[] {
    const d = this.data;
    switch (d.kind) {
      case 'pairs':
        return [d.items[i].a, d.items[i].b];
      case 'triplets':
        return [d.items[i].anchor, d.items[i].positive, d.items[i].negative];
      case 'unsupervised':
        return [d.items[i].text, d.items[i].text];
    }
  }

  batch(epoch: number, index: number): TrainingBatch {
    if (!Number.isInteger(index) || index < 0 || index >= this.batchesPerEpoch) {
      throw new RangeError(`batch ${index} of epoch ${epoch} does not exist (${this.batchesPerEpoch} batches per epoch)`);
    }
    const order = this.order(epoch);
    const examples = order.slice(index * this.opts.batchSize, Math.min(order.length, (index + 1) * this.opts.batchSize));
    const texts: string[] = [];
    const labels: number[] = [];
    for (const i of examples) {
      texts.push(...this.rows(i));
      if (this.data.kind === 'pairs') labels.push(this.data.items[i].label);
    }
    const encoded = texts.map((t) => this.encode(t));
    const tokens = this.tokenizer.pad(encoded);
    let realTokens = 0;
    for (const e of encoded) realTokens += e.ids.length;
    return { epoch, index, examples, tokens, labels, keys: texts, realTokens };
  }

  /** Embedding rows of a full batch. */
  get rowsPerBatch(): number {
    return this.opts.batchSize * rowsPerExample(this.data.kind);
  }
}
