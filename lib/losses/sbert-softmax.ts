/**
 * Sentence-BERT's classification objective (sentence-transformers `SoftmaxLoss` with its defaults,
 * Reimers & Gurevych 2019): on a zigzag pair batch (./batch.ts), a linear classifier over the
 * features (u, v, |u − v|) of each pair predicts its label:
 *
 *   logits_k = W · [u_k; v_k; |u_k − v_k|] + b,   L = (1/P) Σ_k −log softmax(logits_k)[y_k]
 *
 * W ([classes, 3·dim]) and b are trained with the model; `sbertClassifierInit` draws them as
 * PyTorch's nn.Linear does (uniform in ±1/√fan_in), from a seed. Labels are class indices 0..C−1
 * (AnglE Table 3's binary tasks: C = 2). Embeddings are only compared by cosine at evaluation.
 */
import { tf } from '../backend/index.js';
import { InputError } from '../util/errors.js';
import { pairCount, splitPairs } from './batch.js';
import { assertEmbeddings, checkLabels } from './validate.js';
import { mulberry32Uniform } from '../util/mulberry32.js';
import { defineLoss } from './registry.js';

export const SBERT_SOFTMAX_OBJECTIVE = 'SBERT softmax classification';

/** W [classes, 3·dim] and b [classes], as nn.Linear(3·dim, classes) initialises them (kaiming-uniform a = √5). */
export function sbertClassifierInit(dim: number, classes: number, seed: number): { weight: Float32Array; bias: Float32Array } {
  const fanIn = 3 * dim;
  const bound = 1 / Math.sqrt(fanIn);
  // A small seeded generator (mulberry32): the draw only has to be reproducible, not PyTorch's.
  const u = mulberry32Uniform(seed);
  const weight = Float32Array.from({ length: classes * fanIn }, () => (2 * u() - 1) * bound);
  const bias = Float32Array.from({ length: classes }, () => (2 * u() - 1) * bound);
  return { weight, bias };
}

export function sbertSoftmaxLoss(emb: tf.Tensor2D, labels: ArrayLike<number>, weight: tf.Tensor2D, bias: tf.Tensor1D): tf.Scalar {
  assertEmbeddings(emb, SBERT_SOFTMAX_OBJECTIVE);
  const pairs = pairCount(emb.shape[0], SBERT_SOFTMAX_OBJECTIVE);
  const y = checkLabels(labels, pairs, SBERT_SOFTMAX_OBJECTIVE);
  const [classes, features] = weight.shape;
  if (features !== 3 * emb.shape[1]) throw new InputError(`${SBERT_SOFTMAX_OBJECTIVE}: classifier takes ${features} features, the batch gives 3 × ${emb.shape[1]}`);
  const bad = y.findIndex((v) => !Number.isInteger(v) || v < 0 || v >= classes);
  if (bad >= 0) throw new InputError(`${SBERT_SOFTMAX_OBJECTIVE}: pair ${bad} has label ${y[bad]}; expected a class index 0..${classes - 1}`);
  return tf.tidy(() => {
    const { first, second } = splitPairs(emb, SBERT_SOFTMAX_OBJECTIVE);
    const features = tf.concat([first, second, tf.abs(tf.sub(first, second))], 1);
    const logits = tf.add(tf.matMul(features, weight, false, true), bias);
    const oneHot = tf.oneHot(tf.tensor1d(Int32Array.from(y), 'int32'), classes);
    return tf.neg(tf.mean(tf.sum(tf.mul(tf.logSoftmax(logits), oneHot), 1))) as tf.Scalar;
  });
}

let classifierInstances = 0;

/**
 * Registration of objective `sbert-softmax`. It owns trainable parameters (the classifier W, b,
 * named `objective.classifier.*`): the trainer trains and checkpoints them with the model's, and
 * they are not part of the model.
 */
export const SBERT_SOFTMAX_LOSS = defineLoss({
  name: 'sbert-softmax',
  summary: 'Sentence-BERT softmax classifier over (u, v, |u-v|) (class-index pair labels)',
  options: { classes: true },
  kinds: ['pairs'],
  bind: (config: { classes?: number }, _kind, ctx) => {
    if (!ctx.dim) throw new InputError(`objective 'sbert-softmax' needs the embedding size to create its classifier`);
    const dim = ctx.dim;
    const classes = config.classes ?? 2;
    const init = sbertClassifierInit(dim, classes, ctx.seed ?? 0);
    // Variable names must be unique per backend: one scope per bound classifier.
    const scope = `objective${classifierInstances++}`;
    const weight = tf.tidy(() => tf.variable(tf.tensor2d(init.weight, [classes, 3 * dim]), true, `${scope}/classifier.weight`)) as tf.Variable<tf.Rank.R2>;
    const bias = tf.tidy(() => tf.variable(tf.tensor1d(init.bias), true, `${scope}/classifier.bias`)) as tf.Variable<tf.Rank.R1>;
    return {
      loss: (emb, b) => ({ total: sbertSoftmaxLoss(emb, b.labels, weight, bias), terms: {} }),
      parameters: new Map<string, tf.Variable>([
        ['objective.classifier.weight', weight],
        ['objective.classifier.bias', bias],
      ]),
      dispose: () => tf.dispose([weight, bias]),
    };
  },
});
