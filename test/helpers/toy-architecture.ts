/**
 * A toy architecture, written the way a new one is: one file with its config parser, model,
 * tokenizer and registry entry (lib/models/architecture.ts); the registration line is
 * `registerArchitecture(TOY_ARCHITECTURE)` in the test that uses it (a real architecture's line is
 * one row of lib/models/architectures.ts BUILTIN_ARCHITECTURES, its files a folder lib/models/<arch>/).
 *
 *   config.json  {model_type: 'toy-bag', vocab_size, hidden_size, max_position_embeddings, activation: 'tanh'}
 *   tokens       [BOS] then one id per word (a hash of the word), padding 0 on the right
 *   forward      e = E[ids];  h = tanh(e Wᵀ + b);  hidden_states = [e, h]
 *   pooling      avg (its entry's default: the test checks encoders take it when none is named)
 */
import { tf } from '../../lib/backend/index.js';
import type { Architecture } from '../../lib/models/architecture.js';
import { initialWeights, initStdOf } from '../../lib/models/initial-weights.js';
import { TransformerModel, type InitialWeight } from '../../lib/models/transformer-model.js';
import type { BatchOptions, EncodedText, ModelOutput, TextModel, TextTokenizer, TokenBatch } from '../../lib/models/types.js';
import { readTensors } from '../../lib/models/weight-files.js';
import { InputError, UnknownNameError } from '../../lib/util/errors.js';

export const TOY_MODEL_TYPE = 'toy-bag';

interface ToyConfig {
  vocabSize: number;
  hiddenSize: number;
  numLayers: number;
  maxPositions: number;
}

/** Checks config.json's object: every field present and known, a refused one named with the file. */
export function parseToyConfig(raw: Readonly<Record<string, unknown>>, file: string): ToyConfig {
  if (raw.model_type !== TOY_MODEL_TYPE) throw new UnknownNameError('toy model_type', String(raw.model_type), [TOY_MODEL_TYPE], { file });
  if (raw.activation !== undefined && raw.activation !== 'tanh') throw new InputError(`activation '${String(raw.activation)}' is not supported by the toy architecture (tanh only)`, { file });
  const int = (key: string) => {
    const v = raw[key];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) throw new InputError(`'${key}' must be a positive integer, found ${JSON.stringify(v)}`, { file });
    return v;
  };
  return { vocabSize: int('vocab_size'), hiddenSize: int('hidden_size'), numLayers: 1, maxPositions: int('max_position_embeddings') };
}

function toyShapes(c: ToyConfig): Map<string, number[]> {
  return new Map([
    ['embeddings.weight', [c.vocabSize, c.hiddenSize]],
    ['dense.weight', [c.hiddenSize, c.hiddenSize]],
    ['dense.bias', [c.hiddenSize]],
  ]);
}

export class ToyModel extends TransformerModel<ToyConfig> implements TextModel {
  constructor(config: ToyConfig, weights: ReadonlyMap<string, InitialWeight>, dropoutSeed = 0) {
    super(TOY_MODEL_TYPE, config, weights, dropoutSeed);
  }

  protected applyDropout(): void {
    // No dropout in the toy.
  }

  forward(batch: TokenBatch, opts: { outputHiddenStates?: boolean } = {}): ModelOutput {
    return tf.tidy(() => {
      const ids = tf.tensor2d(batch.inputIds, [batch.batch, batch.seqLen], 'int32');
      const e = tf.gather(this.p('embeddings.weight'), ids) as tf.Tensor3D;
      const flat = tf.reshape(e, [-1, this.config.hiddenSize]);
      const h = tf.reshape(tf.tanh(tf.add(tf.matMul(flat, this.p('dense.weight'), false, true), this.p('dense.bias'))), e.shape) as tf.Tensor3D;
      return { lastHiddenState: h, hiddenStates: opts.outputHiddenStates ? [e, h] : [] };
    });
  }
}

/** Words to ids: [BOS]=1, then a hash of each word in [2, vocab); padding 0 on the right. */
export class ToyTokenizer implements TextTokenizer {
  readonly padId = 0;
  readonly padSide = 'right' as const;
  constructor(private readonly vocab: number) {}

  encode(text: string, pair?: string | null, maxLength?: number): EncodedText {
    const words = `${text} ${pair ?? ''}`.toLowerCase().split(/\s+/).filter(Boolean);
    const ids = [1, ...words.map((w) => 2 + ([...w].reduce((h, ch) => (h * 31 + ch.charCodeAt(0)) >>> 0, 7) % (this.vocab - 2)))];
    const kept = maxLength !== undefined ? ids.slice(0, maxLength) : ids;
    return { ids: kept, typeIds: kept.map(() => 0) };
  }

  encodeBatch(inputs: Array<string | [string, string]>, opts: BatchOptions = {}): TokenBatch {
    return this.pad(inputs.map((x) => (typeof x === 'string' ? this.encode(x, null, opts.maxLength) : this.encode(x[0], x[1], opts.maxLength))), opts);
  }

  pad(rows: EncodedText[], opts: BatchOptions = {}): TokenBatch {
    const seqLen = opts.padding === 'max_length' && opts.maxLength ? opts.maxLength : Math.max(1, ...rows.map((r) => r.ids.length));
    const inputIds = new Int32Array(rows.length * seqLen);
    const attentionMask = new Int32Array(rows.length * seqLen);
    rows.forEach((r, i) => r.ids.slice(0, seqLen).forEach((id, t) => {
      inputIds[i * seqLen + t] = id;
      attentionMask[i * seqLen + t] = 1;
    }));
    return { inputIds, attentionMask, tokenTypeIds: new Int32Array(rows.length * seqLen), batch: rows.length, seqLen };
  }
}

export const TOY_ARCHITECTURE: Architecture = {
  name: TOY_MODEL_TYPE,
  modelTypes: [TOY_MODEL_TYPE],
  parseConfig: parseToyConfig,
  load(_dir, config, file, files, o) {
    const cfg = parseToyConfig(config, file);
    return { model: new ToyModel(cfg, readTensors(files), o.dropoutSeed ?? 0), tokenizer: new ToyTokenizer(cfg.vocabSize) };
  },
  parameterShapes: (config) => toyShapes(parseToyConfig(config, 'config')),
  fromConfig(config, opts) {
    const cfg = parseToyConfig(config, 'config');
    return new ToyModel(cfg, initialWeights(toyShapes(cfg), opts, initStdOf(config)), opts.dropoutSeed ?? 0);
  },
  defaultPooling: 'avg',
  embeddingWidth: (config) => Number(config.hidden_size),
  rehearsalTokenizer: (config) => ({ tokenizer: new ToyTokenizer(Number(config.vocab_size)), note: "the toy's own word-hash tokenizer" }),
};

/** A small config of the toy architecture. */
export const TOY_CONFIG = { model_type: TOY_MODEL_TYPE, vocab_size: 64, hidden_size: 8, max_position_embeddings: 32, activation: 'tanh', initializer_range: 0.5 } as const;
