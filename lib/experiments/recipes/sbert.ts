/**
 * Sentence-BERT's recipes (Reimers & Gurevych; sentence-transformers' training_stsbenchmark.py and
 * training_nli.py), AnglE Table 3's SBERT row: cosine-similarity regression for graded labels,
 * softmax classification over (u, v, |u−v|) for 0/1 labels, mean pooling.
 */
import { task, type TaskName } from '../tasks.js';
import { overHfTrainer, SOURCES } from './base.js';
import type { Recipe } from './recipe.js';

export const SBERT_SOURCES = {
  sts: "sentence-transformers' training_stsbenchmark.py: CosineSimilarityLoss on score/5, mean pooling, batch 16, 4 epochs, lr 2e-5, warmup 10% of the steps, weight decay 0.01",
  nli: "sentence-transformers' training_nli.py: SoftmaxLoss over (u, v, |u−v|), mean pooling, batch 16, 1 epoch, lr 2e-5, warmup 10%, weight decay 0.01",
} as const;

/** SBERT on a task's training split: cosine regression for graded labels, softmax classification for 0/1 (AnglE Table 3). */
export function sbertBert(t: TaskName): Recipe {
  const graded = task(t).labels === 'graded';
  const src = graded ? SBERT_SOURCES.sts : SBERT_SOURCES.nli;
  return {
    name: `sbert-${t}`,
    title: `SBERT (${graded ? 'cosine-similarity regression' : 'softmax classification over (u, v, |u−v|)'}) on ${task(t).title} train (AnglE Table 3)`,
    task: t,
    ...overHfTrainer(
      {
        objective: graded ? { name: 'sbert-cosine', scale: 5 } : { name: 'sbert-softmax', classes: 2 },
        pooling: 'avg',
        maxLength: 128,
        batchSize: 16,
        epochs: graded ? 4 : 1,
        lr: 2e-5,
        warmupFraction: 0.1,
        weightDecay: 0.01,
        seed: 42,
        evalEvery: 'epoch',
        checkpointEvery: 50,
      },
      {
        objective: src,
        pooling: src,
        maxLength: `${SOURCES.ours}: 128 tokens (the sentences of these sets are shorter)`,
        batchSize: src,
        epochs: src,
        lr: src,
        schedule: src,
        warmupFraction: src,
        weightDecay: src,
        seed: `${SOURCES.ours}: as the AnglE runs`,
        evalEvery: `${SOURCES.ours}: dev once per epoch, best dev checkpoint tested`,
        checkpointEvery: SOURCES.resumable(50),
      },
    ),
  };
}
