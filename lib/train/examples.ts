/**
 * Training examples in the three shapes the objectives take, checked once before any training
 * starts (so a bad dataset fails before a checkpoint or results file is written):
 *
 * | kind           | one example                      | rows it becomes (lib/losses/batch.ts)   |
 * |----------------|----------------------------------|-----------------------------------------|
 * | `pairs`        | `{ a, b, label }`                | zigzag `[a, b]`, one label per pair      |
 * | `triplets`     | `{ anchor, positive, negative }` | `[anchor, positive, negative]`          |
 * | `unsupervised` | `{ text }`                       | zigzag `[text, text]` (two dropout views)|
 *
 * `source` (file and line) travels with an example so errors can point at the data file.
 */
import type { InputLocation } from '../util/errors.js';
import { InputError, UnknownNameError } from '../util/errors.js';

export interface PairExample {
  a: string;
  b: string;
  label: number;
  source?: InputLocation;
}

export interface TripletExample {
  anchor: string;
  positive: string;
  negative: string;
  source?: InputLocation;
}

export interface UnsupervisedExample {
  text: string;
  source?: InputLocation;
}

export type TrainingExamples =
  | { kind: 'pairs'; name: string; items: readonly PairExample[] }
  | { kind: 'triplets'; name: string; items: readonly TripletExample[] }
  | { kind: 'unsupervised'; name: string; items: readonly UnsupervisedExample[] };

/** Rows one example contributes to the embedding matrix. */
export function rowsPerExample(kind: TrainingExamples['kind']): number {
  return kind === 'triplets' ? 3 : 2;
}

function where(set: TrainingExamples, i: number, src?: InputLocation): InputLocation {
  return src?.file ? src : { file: `${set.name} (example ${i})` };
}

/**
 * Checks every example: texts are strings, pair labels finite numbers (a string such as "4.2" is
 * an error, not something to coerce: it means the loader is wrong).
 */
export function validateExamples(set: TrainingExamples): void {
  if (!set || !Array.isArray(set.items)) throw new InputError(`training data must be { kind, name, items[] }, got ${typeof set}`);
  if (set.items.length === 0) throw new InputError(`training set '${set.name}' is empty`);
  const text = (v: unknown, field: string, i: number, src?: InputLocation) => {
    if (typeof v !== 'string') throw new InputError(`${field} is ${v === null ? 'null' : typeof v}, expected a string`, where(set, i, src));
  };
  set.items.forEach((e, i) => {
    if (e === null || typeof e !== 'object') throw new InputError(`example is ${e === null ? 'null' : typeof e}, expected an object`, where(set, i));
    switch (set.kind) {
      case 'pairs': {
        const p = e as PairExample;
        text(p.a, 'a', i, p.source);
        text(p.b, 'b', i, p.source);
        if (typeof p.label !== 'number' || !Number.isFinite(p.label)) {
          throw new InputError(
            `label is ${typeof p.label === 'number' ? p.label : `${typeof p.label} ${JSON.stringify(p.label)}`}, expected a finite number (0/1 or a graded score)`,
            where(set, i, p.source),
          );
        }
        break;
      }
      case 'triplets': {
        const t = e as TripletExample;
        text(t.anchor, 'anchor', i, t.source);
        text(t.positive, 'positive', i, t.source);
        text(t.negative, 'negative', i, t.source);
        break;
      }
      case 'unsupervised':
        text((e as UnsupervisedExample).text, 'text', i, (e as UnsupervisedExample).source);
        break;
      default:
        throw new UnknownNameError('training data kind', String((set as { kind: string }).kind), ['pairs', 'triplets', 'unsupervised']);
    }
  });
}

/** Pair examples from scored pairs as the data loaders return them (`{ a, b, score, source }`). */
export function pairExamples(
  name: string,
  pairs: readonly { a: string; b: string; score: number; source?: InputLocation }[],
): TrainingExamples {
  return { kind: 'pairs', name, items: pairs.map((p) => ({ a: p.a, b: p.b, label: p.score, source: p.source })) };
}
