/**
 * Pooling strategies: from token states to one sentence vector.
 *
 * | name             | paper name      | vector                                                        |
 * |------------------|-----------------|---------------------------------------------------------------|
 * | `cls`            | cls             | h[:, 0]                                                       |
 * | `cls_avg`        | cls-last-avg    | (h[:, 0] + ΣMh/ΣM) / 2                                         |
 * | `avg`            | last-avg        | ΣMh / ΣM                                                      |
 * | `max`            | last-max        | max over tokens of M⊙h (padding counts as 0, as AnglE does)   |
 * | `first_last_avg` | first-last-avg  | masked mean of (hidden_states[1] + hidden_states[-1]) / 2     |
 * | `last`           | last token      | h at the last real token (right padding) or position -1 (left) |
 *
 * Note on `max`: because padded positions count as 0 (the reference behaviour, which the golden
 * outputs confirm), a dimension whose real values are all negative pools to 0 when the sentence
 * shares a batch with a longer one. Every other strategy is independent of the batch.
 *
 * Formulas from AnglE's and SimCSE's pooling code (see the project's DESIGN notes, §5).
 */
import { tf } from '../backend/index.js';
import { InputError, UnknownNameError } from '../util/errors.js';

export const POOLING_STRATEGIES = ['cls', 'cls_avg', 'avg', 'max', 'first_last_avg', 'last'] as const;
export type Pooling = (typeof POOLING_STRATEGIES)[number];

/** The papers' names (AnglE Table 4, SimCSE) mapped to ours. */
const ALIASES: Record<string, Pooling> = {
  'cls-last-avg': 'cls_avg',
  'last-avg': 'avg',
  mean: 'avg',
  'last-max': 'max',
  'first-last-avg': 'first_last_avg',
  avg_first_last: 'first_last_avg',
  'last-token': 'last',
};

export function parsePooling(name: string): Pooling {
  const n = name.trim();
  if ((POOLING_STRATEGIES as readonly string[]).includes(n)) return n as Pooling;
  const alias = ALIASES[n.toLowerCase()];
  if (alias) return alias;
  throw new UnknownNameError('pooling', name, [...POOLING_STRATEGIES, ...Object.keys(ALIASES)]);
}

/** Whether a strategy needs all hidden states rather than only the last one. */
export function needsHiddenStates(p: Pooling): boolean {
  return p === 'first_last_avg';
}

export interface PoolingInput {
  lastHiddenState: tf.Tensor3D;
  hiddenStates?: tf.Tensor3D[];
  /** [batch, seq], 1 for real tokens. */
  attentionMask: tf.Tensor2D;
  padSide?: 'right' | 'left';
}

function maskedMean(h: tf.Tensor3D, m3: tf.Tensor3D): tf.Tensor2D {
  return tf.div(tf.sum(tf.mul(h, m3), 1), tf.sum(m3, 1)) as tf.Tensor2D;
}

function firstToken(h: tf.Tensor3D): tf.Tensor2D {
  const [B, , D] = h.shape;
  return tf.reshape(tf.slice(h, [0, 0, 0], [B, 1, D]), [B, D]);
}

/** Pools token states into [batch, hidden]. Differentiable (used in training too). */
export function pool(strategy: Pooling, input: PoolingInput): tf.Tensor2D {
  return tf.tidy(() => {
    const h = input.lastHiddenState;
    const m3 = tf.expandDims(tf.cast(input.attentionMask, 'float32'), 2) as tf.Tensor3D;
    switch (strategy) {
      case 'cls':
        return firstToken(h);
      case 'avg':
        return maskedMean(h, m3);
      case 'cls_avg':
        return tf.div(tf.add(firstToken(h), maskedMean(h, m3)), 2) as tf.Tensor2D;
      case 'max':
        return tf.max(tf.mul(h, m3), 1) as tf.Tensor2D;
      case 'first_last_avg': {
        const hs = input.hiddenStates;
        if (!hs || hs.length < 2) throw new InputError("pooling 'first_last_avg' needs the hidden states (forward with outputHiddenStates)");
        const mixed = tf.div(tf.add(hs[1], hs[hs.length - 1]), 2) as tf.Tensor3D;
        return maskedMean(mixed, m3);
      }
      case 'last': {
        const [B, T, D] = h.shape;
        if (input.padSide === 'left') return tf.reshape(tf.slice(h, [0, T - 1, 0], [B, 1, D]), [B, D]) as tf.Tensor2D;
        const one = tf.scalar(1, 'int32');
        const lastIdx = tf.sub(tf.sum(tf.cast(input.attentionMask, 'int32'), 1), one);
        const flatIdx = tf.add(tf.mul(tf.range(0, B, 1, 'int32'), tf.scalar(T, 'int32')), lastIdx);
        return tf.gather(tf.reshape(h, [B * T, D]), flatIdx) as tf.Tensor2D;
      }
    }
  });
}
