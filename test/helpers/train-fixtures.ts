/** Small training data and settings for trainer tests: fast on the cpu backend, yet every path on. */
import type { TrainerConfig } from '../../lib/train/trainer.js';
import type { PairExample } from '../../lib/train/examples.js';

const WORDS = ['a cat', 'the dog', 'sits', 'runs', 'on the mat', 'in the park', 'quickly', 'today', 'a man', 'plays guitar', 'a woman', 'slices onions'];

/** 24 deterministic sentence pairs with graded 0..5 labels. */
export function smallPairs(n = 24): { kind: 'pairs'; name: string; items: PairExample[] } {
  const items = Array.from({ length: n }, (_, i) => ({
    a: `${WORDS[i % WORDS.length]} ${WORDS[(i * 5 + 1) % WORDS.length]} ${WORDS[(i * 7 + 2) % WORDS.length]}`,
    b: `${WORDS[(i + 3) % WORDS.length]} ${WORDS[(i * 5 + 1) % WORDS.length]} ${WORDS[(i * 3) % WORDS.length]}`,
    label: (i * 7) % 6,
  }));
  return { kind: 'pairs', name: 'small pairs', items };
}

/** Shuffled, dropout on, warmup + linear decay, AnglE paper objective: 2 epochs of 6 steps. */
export const SMALL_TRAIN_CONFIG: TrainerConfig = {
  objective: { name: 'angle', loss: { preset: 'paper', weights: { ibn: 0 } } },
  pooling: 'cls',
  maxLength: 12,
  batchSize: 4,
  epochs: 2,
  lr: 1e-3,
  warmupSteps: 2,
  shuffle: true,
  seed: 11,
  dropout: 0.1,
};
