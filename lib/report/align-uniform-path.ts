/**
 * A training run's path in the alignment–uniformity plane (SimACE Figure 6), read from its record:
 * the trainer's probes (lib/train/trainer.ts `probes`, e.g. lib/eval/align-uniform-evaluator.ts
 * under the key 'geometry') add `<key>.alignment` and `<key>.uniformity` to every dev evaluation,
 * and the training record keeps the evaluations in `details.evals` (./training-record.ts). The
 * result feeds ./figures/align-uniform.ts `alignUniformFigure({ paths })`.
 */
import { InputError } from '../util/errors.js';
import type { AlignUniformPath } from './figures/align-uniform.js';
import type { RunRecord } from './run-record.js';

export function alignUniformPathFromRecord(
  record: RunRecord,
  opts: {
    probe?: string;
    name?: string;
    /** The model before training, measured on the same sample: drawn as step 0 (the trainer evaluates first after `evalEvery` steps). */
    start?: { alignment: number; uniformity: number };
  } = {},
): AlignUniformPath {
  const probe = opts.probe ?? 'geometry';
  const evals = (record.details as { evals?: Array<{ step: number; metrics: Record<string, number> }> } | undefined)?.evals;
  if (!Array.isArray(evals)) throw new InputError(`run ${record.runId} has no evaluation log (details.evals): not a training record`);
  const points = evals
    .filter((e) => typeof e.metrics?.[`${probe}.alignment`] === 'number' && typeof e.metrics?.[`${probe}.uniformity`] === 'number')
    .map((e) => ({ step: e.step, alignment: e.metrics[`${probe}.alignment`]!, uniformity: e.metrics[`${probe}.uniformity`]! }));
  if (points.length === 0) {
    const keys = [...new Set(evals.flatMap((e) => Object.keys(e.metrics ?? {})))];
    throw new InputError(`run ${record.runId} logged no '${probe}.alignment'/'${probe}.uniformity' (its evaluation metrics: ${keys.join(', ') || 'none'}); train it with probes: { ${probe}: alignUniformEvaluator(...) }`);
  }
  if (opts.start && points[0]!.step > 0) points.unshift({ step: 0, alignment: opts.start.alignment, uniformity: opts.start.uniformity });
  return { name: opts.name ?? String((record.details as { tableRow?: string })?.tableRow ?? record.runId), points };
}
