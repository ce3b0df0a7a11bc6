/**
 * What AnglE Table 6's notebook shows of its rows (./transfer-run.ts, run as plan rows by
 * ./transfer-rows.ts), in one place: the work per task (sentences, classifier fits per path), the
 * GloVe row's vocabulary coverage, the paper's cells each (row, path) fills,
 * and the comparison tables — every row's accuracies, the two classifier paths on the same
 * embeddings, our time against SentEval's own.
 */
import type { WordVectors } from '../eval/transfer/bow.js';
import { pytorchRegs } from '../eval/transfer/pytorch-path.js';
import { sklearnRegs } from '../eval/transfer/sklearn-path.js';
import { transferTaskSpec } from '../eval/transfer/tasks.js';
import type { CellSource } from '../report/side-by-side.js';
import type { SimpleTable } from '../util/table.js';
import type { EvaluationDataStatus } from './evaluation-data.js';
import { sentevalTimings, vocabularyCoverage } from './transfer-resources.js';
import type { TransferPath, TransferRowRun } from './transfer-run.js';

/** SentEval's task names as the data registry names their data sets (MRPC's SentEval copy is SentEvalMRPC). */
export function transferDatasetId(task: string): string {
  return task === 'MRPC' ? 'SentEvalMRPC' : task;
}

/** Per task: its protocol, the sentences a model row embeds, the classifier fits per path, and what this run does with it. */
export function transferWorkTable(o: { tasks: readonly string[]; data: EvaluationDataStatus; modelTasks: readonly string[]; pytorchTasks: readonly string[]; pytorchOnEveryRow: boolean }): SimpleTable {
  const fits = (task: string, path: 'sklearn' | 'pytorch') => {
    const spec = transferTaskSpec(task);
    const regs = (path === 'sklearn' ? sklearnRegs(spec.protocol) : pytorchRegs(spec.protocol)).length;
    return spec.protocol === 'inner-kfold' ? 10 * (10 * regs + 1) : spec.protocol === 'kfold' ? 10 * regs + 1 : regs + 1;
  };
  const sentencesOf = (task: string) => o.data.rows.filter((r) => r.id === transferDatasetId(task)).reduce((s, r) => s + (r.rows ?? 0) * (task === 'MRPC' ? 2 : 1), 0);
  return {
    caption: 'The work per task: sentences each model row embeds, and classifier fits per path',
    columns: ['task', 'protocol', 'sentences', 'sklearn fits', 'PyTorch fits', 'model rows run it', 'PyTorch path runs it'],
    rows: o.tasks.map((t) => [
      t,
      transferTaskSpec(t).protocol,
      sentencesOf(t),
      fits(t, 'sklearn'),
      fits(t, 'pytorch'),
      o.modelTasks.includes(t) ? 'yes' : 'no (smoke)',
      o.pytorchTasks.includes(t) ? (o.pytorchOnEveryRow ? 'every row' : 'GloVe row') : 'no (smoke)',
    ]),
  };
}

/** How much of each ready task the word vectors cover (why a 4k-word subset cannot give the paper's GloVe row). */
export function vocabularyCoverageTable(wv: WordVectors, tasks: readonly string[], o: { dataDir?: string }): SimpleTable {
  return {
    caption: `How much of each task the word vectors cover (${wv.vectors.size.toLocaleString('en-US')} words, ${wv.dim} dimensions)`,
    columns: ['task', 'tokens', 'with a vector', 'sentences', 'no known word (zero vector)'],
    rows: vocabularyCoverage(wv, tasks, o).map((c) => [c.task, c.tokens, `${(c.tokenShare * 100).toFixed(1)}%`, c.sentences, c.sentencesWithoutKnownToken]),
  };
}

/** The Table 6 cells (tasks and Avg.) each of a path's rows fills, or why a cell is empty. */
export function transferCellSources(rowRuns: readonly TransferRowRun[], path: TransferPath, tasks: readonly string[]): CellSource[] {
  return rowRuns
    .filter((r) => r.path.name === path.name && r.row.paperRow)
    .flatMap((r) =>
      [...tasks, 'Avg.'].map((col) => {
        const metric = col === 'Avg.' ? 'test_Avg' : `test_${col}`;
        const failed = r.failed.find((f) => f.task === col);
        const has = typeof r.run.record.metrics[metric] === 'number';
        const reason = has ? undefined : failed ? `did not run: ${failed.message.split('\n')[0].slice(0, 160)}` : col === 'Avg.' ? 'needs all seven tasks' : 'not run with this preset (see the parameters)';
        return { row: r.row.paperRow!, column: col, ...(has ? { runs: { runIds: [r.run.record.runId] }, metric } : { reason: reason! }) };
      }),
    );
}

function accuracy(r: TransferRowRun, task: string): number | undefined {
  return r.tasks.find((x) => x.task === task)?.acc;
}

/** Every (row, path): test accuracy (%) per task and the average. */
export function transferRowsTable(rowRuns: readonly TransferRowRun[], tasks: readonly string[]): SimpleTable {
  return {
    caption: 'Every row, both paths: test accuracy (%) per task',
    columns: ['row', 'path', ...tasks, 'Avg.'],
    rows: rowRuns.map((r) => [r.row.label, r.path.name, ...tasks.map((t) => accuracy(r, t)?.toFixed(2) ?? ''), r.run.record.metrics.test_Avg?.toFixed(2) ?? '']),
  };
}

/** The scikit-learn path beside the PyTorch path on the same embeddings, and one line on how far apart they are. */
export function transferPathsTable(rowRuns: readonly TransferRowRun[], tasks: readonly string[]): { table: SimpleTable; summary: string } {
  const rows: SimpleTable['rows'] = [];
  for (const r of rowRuns.filter((x) => x.path.name === 'sklearn')) {
    const p = rowRuns.find((x) => x.row === r.row && x.path.name === 'pytorch');
    for (const t of tasks) {
      const a = accuracy(r, t);
      const b = p && accuracy(p, t);
      if (a !== undefined && b !== undefined) rows.push([r.row.label, t, a.toFixed(2), b.toFixed(2), (b - a).toFixed(2)]);
    }
  }
  const gaps = rows.map((x) => Math.abs(Number(x[4])));
  return {
    table: { caption: 'scikit-learn path vs PyTorch path (test accuracy %)', columns: ['row', 'task', 'scikit-learn', 'PyTorch', 'Δ (PyTorch − scikit-learn)'], rows },
    summary: gaps.length ? `The paths differ by at most ${Math.max(...gaps).toFixed(2)} points (mean |Δ| ${(gaps.reduce((a, b) => a + b, 0) / gaps.length).toFixed(2)}) over ${gaps.length} row-task pairs.` : 'No task ran with both paths.',
  };
}

/** Seconds per task of a row on the scikit-learn path against SentEval's own (the transfer golden set records them), and one line on the ratio. */
export function transferTimeTable(row: TransferRowRun | undefined): { table?: SimpleTable; summary: string } {
  const ref = sentevalTimings();
  if (!ref) return { summary: "SentEval's timings come from the transfer golden set, which is not on this machine." };
  if (!row) return { summary: 'The GloVe row did not run.' };
  const rows: SimpleTable['rows'] = [];
  let ours = 0;
  let theirs = 0;
  for (const t of row.tasks) {
    const a = t.seconds.embed + t.seconds.classify;
    const b = ref.seconds[t.task];
    if (b === undefined) continue;
    ours += a;
    theirs += b;
    rows.push([t.task, a.toFixed(1), b.toFixed(1), (a / b).toFixed(2)]);
  }
  rows.push(['all', ours.toFixed(1), theirs.toFixed(1), (ours / theirs).toFixed(2)]);
  return {
    table: { caption: 'Seconds per task, GloVe row, scikit-learn path', columns: ['task', 'ours (embed + classify)', 'SentEval', 'ours / SentEval'], rows },
    summary: `${row.status === 'reused' ? '(Timed when the record was made, not now: FORCE = true re-times it.) ' : ''}Ours: ${ours.toFixed(1)} s, SentEval: ${theirs.toFixed(1)} s (${ref.what}): ${(ours / theirs).toFixed(2)}× SentEval's time.`,
  };
}
