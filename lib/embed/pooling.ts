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
 * | `cls_avg_legacy` | (released AnglE-BERT's scores) | (h[:, 0] + (1/T) Σ_{t<T} h[:, t]) / 2, T = the batch's padded length |
 * | `cls_avg_batch_tokens` | —         | (h[:, 0] + Σ_t M h / Σ_{b,t} M) / 2: the mean divided by the whole batch's token count |
 * | `cls_pooler`     | (SimCSE's `cls`) | tanh(W h[:, 0] + b): BERT's pooler output, W and b the checkpoint's `pooler.dense` |
 *
 * Note on `max`: because padded positions count as 0 (the reference behaviour, which the golden
 * outputs confirm), a dimension whose real values are all negative pools to 0 when the sentence
 * shares a batch with a longer one. `cls_avg_legacy` and `cls_avg_batch_tokens` depend on the
 * batch by construction; every other strategy is independent of it.
 *
 * The two legacy strategies are what angle_emb's `cls_avg` computed in its earlier releases
 * (SeanLee97/AnglE, angle_emb/angle.py):
 * - angle_emb 0.1.0–0.3.3 (Oct 2023–Feb 2024; the `Pooler` class): `(outputs[:, 0] +
 *   torch.mean(outputs, dim=1)) / 2.0`, a mean over all T positions of the padded batch, padding
 *   included. The released `SeanLee97/angle-bert-base-uncased-nli-en-v1` was scored with it (its
 *   author reports 82.43 average with angle_emb 0.1.1, AnglE issue #68; the paper says 82.37).
 *   With L real tokens in a row, m = ΣMh/L its masked mean and P = Σ_{L≤t<T} h[:, t] the states at
 *   its padding positions (BERT computes states there too; only attention to them is masked):
 *
 *       cls_avg_legacy − cls_avg = ½ [ (1/T) Σ_{t<T} h_t − m ] = ½ [ (L/T − 1)·m + P/T ]
 *
 *   which is 0 for the longest row of a batch (L = T) and not for a padded one, so the score
 *   depends on which sentences share a batch: SentEval's order and batch size (16 in AnglE's
 *   eval.py) are part of the reported number (lib/eval/senteval-sts.ts `sentevalBatchSize`).
 * - angle_emb 0.3.4–0.5.4 (Feb–Nov 2024; `get_pooling`): `torch.sum(outputs * mask[:, :, None],
 *   dim=1) / torch.sum(mask)`, the masked sum divided by the number of real tokens in the whole
 *   batch, which shrinks the mean part about B-fold and leaves mostly [CLS]; the maintainer puts
 *   the other numbers users got with later versions down to these pooling changes (issue #68).
 *   0.5.5 (Jan 2025) divides per row, as `cls_avg` does here.
 *
 * `cls_pooler` is how SimCSE evaluates its supervised checkpoints (SimCSE evaluation.py
 * `--pooler cls`: `outputs.pooler_output`, the [CLS] state through the pre-trained pooler's dense
 * layer and tanh; its README: use `cls_before_pooler`, our `cls`, for the unsupervised ones). The
 * model computes that vector (ModelOutput.poolerOutput); pooling only passes it on, so it needs a
 * checkpoint with `pooler.dense` weights.
 *
 * Formulas from AnglE's and SimCSE's pooling code (see the project's DESIGN notes, §5).
 */
import { tf } from '../backend/index.js';
import type { Pooling } from '../models/pooling.js';
import { InputError } from '../util/errors.js';

// The names (type, parser, alias table) are the model's (lib/models/pooling.ts); this file is the math.
export { ANGLE_TABLE4_POOLING_ROWS, POOLING_STRATEGIES, POOLING_ALIASES, parsePooling, poolingSlug, type Pooling } from '../models/pooling.js';

/** Whether a strategy needs all hidden states rather than only the last one. */
export function needsHiddenStates(p: Pooling): boolean {
  return p === 'first_last_avg';
}

/** Whether a strategy reads the model's pooler output (BERT's tanh(dense(h[:, 0]))) rather than token states. */
export function needsPoolerOutput(p: Pooling): boolean {
  return p === 'cls_pooler';
}

/** Whether a strategy reads the states at padding slots (cls_avg_legacy: torch.mean over the padded batch). */
export function readsPaddingPositions(p: Pooling): boolean {
  return p === 'cls_avg_legacy';
}

/** Whether a strategy reads slot 0 of the last hidden state and nothing else (engines may then skip the other rows of the last layer). */
export function readsFirstTokenOnly(p: Pooling, padSide: 'right' | 'left' = 'right'): boolean {
  return p === 'cls' && padSide === 'right';
}

export interface PoolingInput {
  lastHiddenState: tf.Tensor3D;
  hiddenStates?: tf.Tensor3D[];
  /** [batch, seq], 1 for real tokens. */
  attentionMask: tf.Tensor2D;
  padSide?: 'right' | 'left';
  /** [batch, hidden]: the model's pooler output (ModelOutput.poolerOutput), for `cls_pooler`. */
  poolerOutput?: tf.Tensor2D;
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
      case 'cls_avg_legacy':
        // torch.mean(outputs, dim=1): every position of the padded batch, padding included.
        return tf.div(tf.add(firstToken(h), tf.div(tf.sum(h, 1), h.shape[1])), 2) as tf.Tensor2D;
      case 'cls_avg_batch_tokens':
        // torch.sum(outputs * mask, dim=1) / torch.sum(mask): one denominator for the whole batch.
        return tf.div(tf.add(firstToken(h), tf.div(tf.sum(tf.mul(h, m3), 1), tf.sum(m3))), 2) as tf.Tensor2D;
      case 'cls_pooler':
        if (!input.poolerOutput) {
          throw new InputError("pooling 'cls_pooler' needs the model's pooler output, tanh(dense(h[:, 0])): this model has none (a BERT checkpoint without pooler.dense weights, or not a BERT)");
        }
        // Returned through tidy, so the caller's tensor is copied, not handed out twice.
        return tf.clone(input.poolerOutput);
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
