/**
 * A RanNet config.json as `rannet` 0.3.1's `RanNetParams` reads it (rannet.py:28-40): vocab_size is
 * required, every other key has RanNetParams' default. RanNetParams ignores keys it does not know
 * (a released config.json probably lacks `model_type`); here a key that would change the forward
 * and that this port does not compute is refused by name rather than silently ignored, and other
 * unknown keys are ignored as RanNetParams does.
 *
 * Source of the keys and defaults: ../shared/golden/ran-tiny-seed11/ran_reference.py PARAM_DEFAULTS
 * (the golden set's transcription of rannet.py:28-40).
 */
import { InputError, UnknownNameError } from '../../util/errors.js';

export const RAN_MODEL_TYPES: readonly string[] = ['rannet', 'ran'];

export const RAN_CELL_POOLINGS = ['last', 'mean', 'max'] as const;
export type RanCellPooling = (typeof RAN_CELL_POOLINGS)[number];

/**
 * RAN has no position table (rotary positions restart in every window), so nothing bounds the
 * sequence length but memory; this is the bound `maxPositions` reports to tokenisation.
 */
export const RAN_MAX_POSITIONS = 1 << 20;

export interface RanConfig {
  modelType: string;
  vocabSize: number;
  /** embedding_size: D, the width of tokens and cells (TransformerDimensions.hiddenSize). */
  hiddenSize: number;
  /** ran_layers. */
  numLayers: number;
  headNum: number;
  headSize: number;
  windowSize: number;
  minWindowSize: number;
  /** Which pooled cell RanNet returns with return_cell (the sentence vector here). */
  cellPooling: RanCellPooling;
  dropoutRate: number;
  maxPositions: number;
}

/** RanNetParams' defaults (rannet.py:28-40). */
const DEFAULTS = {
  embedding_size: 512,
  dropout_rate: 0.1,
  ran_layers: 2,
  head_size: 128,
  head_num: 8,
  window_size: 256,
  min_window_size: 16,
  cell_pooling: 'last',
} as const;

/** Keys RanNetParams knows that only matter to initialising or training in Keras: read and ignored. */
const INITIALIZER_KEYS = ['embedding_initializer', 'kernel_initializer', 'kernel_initializer_range'];

/**
 * Keys of RanNet's constructor or of other variants that change the computation and are not ported:
 * a config naming them with a non-default value is refused. (apply_lm_mask / apply_seq2seq_mask are
 * RanNet constructor arguments, not RanNetParams keys, but a hand-written config might carry them.)
 */
const UNSUPPORTED: Record<string, unknown> = {
  apply_lm_mask: false,
  apply_seq2seq_mask: false,
  apply_memory_review: true,
  apply_cell_transform: false,
};

export function parseRanConfig(raw: unknown, file = 'config.json'): RanConfig {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new InputError('expected a JSON object', { file });
  const c = raw as Record<string, unknown>;
  const modelType = typeof c.model_type === 'string' ? c.model_type : 'rannet';
  if (!RAN_MODEL_TYPES.includes(modelType)) throw new UnknownNameError('RanNet model_type', modelType, RAN_MODEL_TYPES, { file });
  for (const [k, ok] of Object.entries(UNSUPPORTED)) {
    if (k in c && c[k] !== ok) {
      throw new InputError(`'${k}': ${JSON.stringify(c[k])} is not supported by this RanNet port (only the encoder with the memory review and without the cell-transform head, i.e. ${k} = ${JSON.stringify(ok)})`, { file });
    }
  }
  const int = (k: string, dflt?: number): number => {
    const v = c[k] ?? dflt;
    if (typeof v !== 'number' || !Number.isInteger(v) || v <= 0) {
      throw new InputError(`'${k}' must be a positive integer${dflt === undefined ? ' (required: RanNetParams has no default)' : ''}, found ${JSON.stringify(c[k])}`, { file });
    }
    return v;
  };
  const dropout = c.dropout_rate ?? DEFAULTS.dropout_rate;
  if (typeof dropout !== 'number' || !(dropout >= 0 && dropout < 1)) throw new InputError(`'dropout_rate' must be in [0, 1), found ${JSON.stringify(c.dropout_rate)}`, { file });
  const pooling = String(c.cell_pooling ?? DEFAULTS.cell_pooling);
  if (!(RAN_CELL_POOLINGS as readonly string[]).includes(pooling)) throw new UnknownNameError('cell_pooling', pooling, RAN_CELL_POOLINGS, { file });
  for (const k of INITIALIZER_KEYS) {
    if (k in c && typeof c[k] !== 'string' && typeof c[k] !== 'number') throw new InputError(`'${k}' must be a string or a number, found ${JSON.stringify(c[k])}`, { file });
  }
  const cfg: RanConfig = {
    modelType,
    vocabSize: int('vocab_size'),
    hiddenSize: int('embedding_size', DEFAULTS.embedding_size),
    numLayers: int('ran_layers', DEFAULTS.ran_layers),
    headNum: int('head_num', DEFAULTS.head_num),
    headSize: int('head_size', DEFAULTS.head_size),
    windowSize: int('window_size', DEFAULTS.window_size),
    minWindowSize: int('min_window_size', DEFAULTS.min_window_size),
    cellPooling: pooling as RanCellPooling,
    dropoutRate: dropout,
    maxPositions: RAN_MAX_POSITIONS,
  };
  // ran.py:637 asserts window_size > min_window_size.
  if (!(cfg.windowSize > cfg.minWindowSize)) throw new InputError(`'window_size' ${cfg.windowSize} must exceed 'min_window_size' ${cfg.minWindowSize} (ran.py:637)`, { file });
  // Rotary embeddings rotate pairs of a head's dimensions.
  if (cfg.headSize % 2 !== 0) throw new InputError(`'head_size' ${cfg.headSize} must be even (rotary positions rotate pairs of dimensions)`, { file });
  return cfg;
}

/** The config.json of a RanConfig (what a saved model directory holds). */
export function ranConfigJson(cfg: RanConfig): Record<string, unknown> {
  return {
    model_type: 'rannet',
    vocab_size: cfg.vocabSize,
    embedding_size: cfg.hiddenSize,
    dropout_rate: cfg.dropoutRate,
    ran_layers: cfg.numLayers,
    head_size: cfg.headSize,
    head_num: cfg.headNum,
    window_size: cfg.windowSize,
    min_window_size: cfg.minWindowSize,
    cell_pooling: cfg.cellPooling,
  };
}
