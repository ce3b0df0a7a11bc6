/**
 * SentEval's STS suite (./senteval-sts.ts) as one Evaluator, so a training run can report the
 * papers' seven columns as its test evaluation (SimACE Table 1, PromptEOL Tables 1–2) and an
 * embedding-only run can record them the same way.
 *
 * Metrics (fractions; a results record multiplies by 100):
 *
 * | metric            | value                                                              |
 * |-------------------|--------------------------------------------------------------------|
 * | `STS12`…`STS16`   | Spearman over the year's subsets concatenated (SentEval's `all`)   |
 * | `STSBenchmark`    | STS-B test Spearman                                                |
 * | `SICKRelatedness` | SICK-R test Spearman                                               |
 * | `avg`             | mean of the tasks evaluated (the papers' Avg. when all seven are)  |
 * | `spearman`        | STS-B test again, when STS-B is evaluated: the figure the per-pair predictions (STS-B test's cosines) belong to |
 *
 * `pairsPerSet` keeps only the first N pairs (file order) of every set: a smoke run's shortcut,
 * said in the evaluator's name, never the papers' protocol. Only the test splits of STS-B and
 * SICK-R are read (dev selects checkpoints elsewhere). The sets are loaded when the evaluator is
 * made, so a missing file fails before any training.
 */
import type { SentenceEncoder } from '../embed/types.js';
import { loadStsTask, type StsSet } from '../data/sts.js';
import { STS_TASKS, type StsTaskName } from '../data/registry.js';
import { InputError, UnknownNameError } from '../util/errors.js';
import type { SimpleTable } from '../util/table.js';
import type { EvaluationResult, Evaluator } from './evaluator.js';
import { evaluateStsSets, reportedSpearman } from './senteval-sts.js';

/** The papers' STS columns and the metric of this evaluator that fills each. */
export const SENTEVAL_STS_COLUMNS: ReadonlyArray<{ column: string; metric: string }> = [
  { column: 'STS12', metric: 'STS12' },
  { column: 'STS13', metric: 'STS13' },
  { column: 'STS14', metric: 'STS14' },
  { column: 'STS15', metric: 'STS15' },
  { column: 'STS16', metric: 'STS16' },
  { column: 'STS-B', metric: 'STSBenchmark' },
  { column: 'SICK-R', metric: 'SICKRelatedness' },
  { column: 'Avg.', metric: 'avg' },
];

export interface SentevalStsEvaluatorOptions {
  dataDir?: string;
  /** Default: the seven tasks of the papers. */
  tasks?: readonly StsTaskName[];
  /** Keep the first N pairs of every set (smoke runs only; the name says so). */
  pairsPerSet?: number;
}

/** SentEval's STS tasks as one Evaluator (see the file comment). */
export function sentevalStsEvaluator(opts: SentevalStsEvaluatorOptions = {}): Evaluator {
  const tasks = opts.tasks ?? STS_TASKS;
  if (tasks.length === 0) throw new InputError('a SentEval STS evaluator needs at least one task');
  for (const t of tasks) if (!(STS_TASKS as readonly string[]).includes(t)) throw new UnknownNameError('STS task', t, STS_TASKS);
  const cap = opts.pairsPerSet;
  if (cap !== undefined && !(Number.isInteger(cap) && cap >= 2)) throw new InputError(`pairsPerSet must be an integer >= 2 (Spearman needs two pairs), got ${cap}`);
  const loaded = new Map<StsTaskName, StsSet[]>();
  for (const t of tasks) {
    const sets = loadStsTask(t, { dataDir: opts.dataDir, splits: ['test'] });
    loaded.set(t, cap === undefined ? sets : sets.map((s) => ({ ...s, pairs: s.pairs.slice(0, cap) })));
  }
  const rows = [...loaded.values()].flat().reduce((n, s) => n + s.pairs.length, 0);
  const all = tasks.length === STS_TASKS.length;
  const name = `SentEval STS (${all ? 'the 7 tasks' : tasks.join(', ')}, test${cap !== undefined ? `; smoke: first ${cap} pairs of each set` : ''})`;
  return {
    name,
    primaryMetric: 'avg',
    higherIsBetter: true,
    rows,
    async evaluate(encoder: SentenceEncoder): Promise<EvaluationResult> {
      const metrics: Record<string, number> = {};
      let predictions: Float64Array | undefined;
      let gold: Float64Array | undefined;
      for (const [task, sets] of loaded) {
        const { encodeSeconds: _, ...r } = await evaluateStsSets(encoder, task, sets);
        const rho = reportedSpearman(r);
        if (rho === undefined) throw new Error(`${task}: no test split was scored`);
        metrics[task] = rho;
        if (task === 'STSBenchmark') {
          const test = r.sets.find((s) => s.name === 'test')!;
          metrics.spearman = rho;
          predictions = test.cosines;
          gold = test.gold;
        }
      }
      metrics.avg = tasks.reduce((s, t) => s + metrics[t], 0) / tasks.length;
      return { metrics, ...(predictions && gold ? { predictions, gold } : {}) };
    },
  };
}

/**
 * Rows of SentEval STS results as the papers print them (STS12 … SICK-R, Avg.; ρ × 100): each row
 * a label and a record's metrics, read as `<prefix><metric>` (default `test_`, how a results
 * record stores an evaluator's metrics). A missing metric shows as blank.
 */
export function sentevalMetricsTable(rows: ReadonlyArray<{ label: string; metrics: Readonly<Record<string, number>> }>, caption: string, prefix = 'test_'): SimpleTable {
  return {
    caption,
    columns: ['row', ...SENTEVAL_STS_COLUMNS.map((c) => c.column)],
    rows: rows.map((r) => [r.label, ...SENTEVAL_STS_COLUMNS.map(({ metric }) => (r.metrics[`${prefix}${metric}`] === undefined ? '' : r.metrics[`${prefix}${metric}`].toFixed(2)))]),
  };
}
