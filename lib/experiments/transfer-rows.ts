/**
 * AnglE Table 6's rows (SentEval transfer tasks, ./transfer-run.ts) as plan rows (./plan-evaluation.ts):
 * the GloVe bag-of-words row, and a model entry (./evaluation-models.ts) with one table row per
 * pooling, all its poolings sharing one forward pass per task. Each runs every classifier path it
 * is given, each (row, path) one record through the run store; under the rehearsal preset the plan
 * asks a model entry to rehearse its encoding of the tasks' sentences instead (a bag-of-words row
 * averages word vectors on the host: nothing to rehearse, it is not run).
 *
 * After `plan.run()`, `transferRunsOf(plan)` gives every (row, path) run in the rows' order and the
 * rows that could not run here with why: what ./transfer-tables.ts shows (one side-by-side per path,
 * through `transferCellSources`).
 */
import { sharedPoolingEncoders } from '../embed/encoder.js';
import { parsePooling } from '../embed/pooling.js';
import { SENTEVAL_TRANSFER_TASKS } from '../eval/transfer/tasks.js';
import { join } from 'node:path';
import { openModelEntry, type ModelEntry } from './evaluation-models.js';
import type { EvaluationContext, EvaluationOutcome, RehearsalContext, RehearsedEvaluation, RowEvaluation } from './plan-evaluation.js';
import type { Plan, PlanRow } from './plan.js';
import { rehearseEncoding, transferTexts } from './rehearsal/encode.js';
import type { RehearsalRow } from './rehearsal/summary.js';
import { bowTransferRow, modelTransferRow, runTransferRows, type RunTransferOptions, type TransferPath, type TransferRowRun } from './transfer-run.js';

/** A table row of a model entry: its pooling (none: as the entry resolves it) and where it goes beside the paper. */
export interface ModelTransferRow {
  pooling?: string;
  label: string;
  paperRow?: string;
}

/** What a transfer plan row ran: its (row, path) runs, or why it could not run here. */
export interface TransferOutcome {
  runs: TransferRowRun[];
  unavailable?: string;
}

/**
 * A model entry's rows (one per pooling; a row without one embeds as the entry resolves it — a
 * released checkpoint with its authors' pooling), all sharing one forward pass per task; or why the
 * model cannot be opened here.
 */
export async function runModelTransfer(entry: ModelEntry, rows: readonly ModelTransferRow[], o: Omit<RunTransferOptions, 'rows' | 'afterTask'>): Promise<TransferOutcome> {
  const m = await openModelEntry(entry, o.resultsDir ? { workDir: join(o.resultsDir, 'released-models') } : {});
  if (!m.loaded) {
    o.log?.(`${entry.label}: ${m.unavailable}`);
    return { runs: [], unavailable: m.unavailable };
  }
  try {
    const poolings = rows.map((r) => r.pooling ?? String(m.config!.pooling));
    const shared = sharedPoolingEncoders(m.loaded, poolings.filter((p) => p !== 'sentence-transformers'));
    const encoderOf = (p: string) => (p === 'sentence-transformers' ? m.encoder! : shared.encoders.get(parsePooling(p))!);
    const runs = await runTransferRows({
      ...o,
      rows: rows.map((r, i) => modelTransferRow(m, encoderOf(poolings[i]!), { ...r, pooling: poolings[i]! })),
      afterTask: () => shared.clear(),
    });
    return { runs };
  } finally {
    m.loaded.model.dispose();
  }
}

/** The rehearsal preset's stand-in for `runModelTransfer`: the tasks' sentences encoded at their real shapes (./rehearsal/encode.ts), once for all poolings. */
export async function rehearseModelTransfer(entry: ModelEntry, o: { notebook: string; tasks?: readonly string[]; dataDir?: string; resultsDir: string }): Promise<RehearsalRow> {
  const tasks = [...(o.tasks ?? SENTEVAL_TRANSFER_TASKS)];
  return rehearseEncoding({ notebook: o.notebook, run: `${entry.label}: SentEval transfer tasks (${tasks.join(', ')})`, model: entry.model, texts: transferTexts(tasks, o.dataDir), batchSize: 64, resultsDir: o.resultsDir });
}

/** What a transfer row embeds with: SentEval's bow.py over a word-vector file, or a model entry's poolings. */
export type TransferSource = { kind: 'bow'; file: string; label: string; paperRow?: string } | { kind: 'model'; entry: ModelEntry; rows: readonly ModelTransferRow[] };

/** The classifier paths a row runs and the tasks it runs them on. */
export interface TransferRowOptions {
  paths: readonly TransferPath[];
  /** Default all seven. */
  tasks?: readonly string[];
}

/** One plan row of Table 6's notebook (see the file comment). */
export class TransferEvaluation implements RowEvaluation {
  readonly kind = 'senteval-transfer';

  constructor(
    readonly source: TransferSource,
    private readonly o: TransferRowOptions,
  ) {}

  get model(): string {
    return this.source.kind === 'bow' ? this.source.file : this.source.entry.model;
  }

  get summary(): string {
    const tasks = this.o.tasks ?? SENTEVAL_TRANSFER_TASKS;
    return `SentEval transfer tasks (${tasks.join(', ')}) of ${this.source.kind === 'bow' ? this.source.label : this.source.rows.map((r) => r.label).join(', ')}, ${this.o.paths.map((p) => p.name).join(' and ')} path`;
  }

  get identity(): string {
    return JSON.stringify({ kind: this.kind, source: this.source, paths: this.o.paths.map((p) => [p.name, p.tasks]), tasks: this.o.tasks });
  }

  private outcome(r: TransferOutcome): EvaluationOutcome {
    return { runs: r.runs.map((x) => ({ label: `${x.row.label}, ${x.path.name} path`, run: x.run, status: x.status })), ...(r.unavailable ? { why: r.unavailable } : {}), result: r };
  }

  async run(ctx: EvaluationContext): Promise<EvaluationOutcome> {
    const o = { paths: this.o.paths, ...(this.o.tasks ? { tasks: this.o.tasks } : {}), experiment: ctx.experiment, resultsDir: ctx.resultsDir, dataDir: ctx.dataDir, force: ctx.force, log: ctx.log };
    const s = this.source;
    if (s.kind === 'bow') return this.outcome({ runs: await runTransferRows({ ...o, rows: [bowTransferRow(s.file, { label: s.label, ...(s.paperRow ? { paperRow: s.paperRow } : {}) })] }) });
    return this.outcome(await runModelTransfer(s.entry, s.rows, o));
  }

  async rehearse(ctx: RehearsalContext): Promise<RehearsedEvaluation> {
    const s = this.source;
    if (s.kind === 'bow') {
      ctx.log?.(`rehearsal: ${s.label}: word-vector averaging on the host, nothing to rehearse (not run)`);
      return { rows: [], why: 'word-vector averaging on the host: nothing to rehearse', result: { runs: [] } satisfies TransferOutcome };
    }
    const r = await rehearseModelTransfer(s.entry, { notebook: ctx.notebook, tasks: this.o.tasks, dataDir: ctx.dataDir, resultsDir: ctx.resultsDir });
    return { rows: [r], result: { runs: [], unavailable: `rehearsed: ${r.status}${r.why ? ` (${r.why})` : ''} — see the rehearsal table` } satisfies TransferOutcome };
  }
}

/**
 * The GloVe row as a plan row: `glove.file` the word vectors (none: the row says `glove.note`);
 * its cells come from `transferCellSources` (one side-by-side per path), not the plan's.
 */
export function bowTransferPlanRow(glove: { file?: string; note: string }, o: TransferRowOptions & { label: string; paperRow?: string }): PlanRow {
  const source: TransferSource = { kind: 'bow', file: glove.file ?? '', label: o.label, ...(o.paperRow ? { paperRow: o.paperRow } : {}) };
  return { row: o.label, cells: [], offTable: true, ...(glove.file ? {} : { unavailable: glove.note }), evaluation: new TransferEvaluation(source, o) };
}

/** A model entry's rows (one per pooling) as one plan row; its cells come from `transferCellSources`. */
export function modelTransferPlanRow(entry: ModelEntry, rows: readonly ModelTransferRow[], o: TransferRowOptions): PlanRow {
  return { row: entry.label, cells: [], offTable: true, evaluation: new TransferEvaluation({ kind: 'model', entry, rows }, o) };
}

/** After `plan.run()`: every (row, path) run in the rows' order, and the plan rows that could not run here with why. */
export function transferRunsOf(plan: Plan): { runs: TransferRowRun[]; unavailable: Array<{ label: string; reason: string }> } {
  const runs: TransferRowRun[] = [];
  const unavailable: Array<{ label: string; reason: string }> = [];
  for (const row of plan.rows) {
    if (!(row.evaluation instanceof TransferEvaluation)) continue;
    const r = plan.outcomeOf(row)?.result as TransferOutcome | undefined;
    if (r) {
      runs.push(...r.runs);
      if (r.unavailable) unavailable.push({ label: row.row, reason: r.unavailable });
      continue;
    }
    const skipped = plan.runs.find((x) => x.row === row && x.skipped)?.skipped;
    if (skipped) unavailable.push({ label: row.row, reason: skipped });
  }
  return { runs, unavailable };
}
