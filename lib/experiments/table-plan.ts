/**
 * A paper table's training plan, the part every table notebook shares: the table's rows, each
 * reproduced by a recipe (or marked as not runnable here, with the reason), shrunk to the preset's
 * size, at one or more seeds; the task data loaded once per task (a data set missing on this
 * machine marks its rows instead of stopping the notebook); and then
 *
 * - `recipeTable()`: every hyperparameter of a row's recipe with where its value comes from;
 * - `dataTable()`: each task's splits and sizes, or what is missing and how to get it;
 * - `costTable()`: steps, tokens and the time each row will take here, from measured steps;
 * - `run()`: every row × seed trained, reused when already finished, resumed when interrupted;
 * - `cellSources()`: which runs fill which cell of the paper table (for lib/report side-by-side).
 */
import { ensureDataset } from '../data/ensure.js';
import { UnavailableError, InputError } from '../util/errors.js';
import type { SimpleTable } from '../util/table.js';
import type { Evaluator } from '../eval/evaluator.js';
import type { CellSource } from '../report/side-by-side.js';
import type { PaperCell } from '../report/run-record.js';
import type { EvalLog, StepLog } from '../train/checkpoint.js';
import type { TrainerConfig } from '../train/trainer.js';
import { estimateCost } from './cost.js';
import { presetByName, type RunScale } from './presets.js';
import { scaleRecipe, type Recipe } from './recipes.js';
import { runRecipe, type RecipeRun } from './run-recipe.js';
import { task, type TaskData, type TaskName } from './tasks.js';

/** One row (cell) of a paper table and the recipe that reproduces it. */
export interface PlannedRow {
  /** The paper's row label, as printed. */
  row: string;
  /** The row's group in the paper table, where labels repeat across groups. */
  group?: string;
  /** The paper table's column this row's number goes to. */
  column: string;
  /** Absent for a row that cannot run here (then `unavailable` says why). */
  recipe?: Recipe;
  unavailable?: string;
  /** The paper's number for this cell, copied into the run records. */
  paper?: PaperCell;
  /** A row the paper table does not print (e.g. a claim of the text): trained, not mapped to a cell. */
  offTable?: boolean;
}

export interface TablePlanOptions {
  /** results/<experiment>/ holds the runs. */
  experiment: string;
  /** A Hub id or model directory. */
  model: string;
  dataDir?: string;
  /** The preset whose run size applies ('smoke', 'paper'); none: the recipes' own size. */
  preset?: string;
  seeds: readonly number[];
  /** Values that replace the recipes' own (a notebook's parameter cell). */
  overrides?: Partial<TrainerConfig>;
  resultsDir?: string;
  /** Fetch missing data sets from the Hugging Face Hub (default true; the Hub may be unreachable). */
  download?: boolean;
  /** Recorded in each run's details (e.g. the notebook's name). */
  details?: Record<string, unknown>;
  /** Evaluated beside the dev set at every dev evaluation of every run (./run-recipe.ts `probes`). */
  probes?: Record<string, Evaluator>;
}

export interface LiveHooks {
  onStep?(log: StepLog): void;
  onEval?(log: EvalLog): void;
  close?(): void;
}

export interface PlannedRun {
  row: PlannedRow;
  seed: number;
  /** The run, unless the row could not run (then `skipped` says why). */
  run?: RecipeRun;
  skipped?: string;
}

function scaleOf(preset: string | undefined): RunScale {
  return preset ? presetByName(preset).scale : {};
}

export class TablePlan {
  private constructor(
    readonly rows: readonly PlannedRow[],
    readonly o: TablePlanOptions,
    private readonly data: Map<TaskName, TaskData | string>,
    readonly runs: PlannedRun[] = [],
  ) {}

  /** Loads (and, where allowed, downloads) the data of every task the rows train on. */
  static async create(rows: readonly PlannedRow[], o: TablePlanOptions): Promise<TablePlan> {
    const data = new Map<TaskName, TaskData | string>();
    for (const r of rows) {
      if (!r.recipe || data.has(r.recipe.task)) continue;
      const t = task(r.recipe.task);
      try {
        if (o.download ?? true) for (const id of t.datasets) await ensureDataset(id, { dataDir: o.dataDir });
        data.set(t.name, t.load({ dataDir: o.dataDir }));
      } catch (e) {
        if (!(e instanceof InputError) && !(e instanceof UnavailableError)) throw e;
        data.set(t.name, e.message);
      }
    }
    return new TablePlan(rows, o, data);
  }

  /** A row's recipe as it will run: shrunk to the preset's size, with the overrides applied. */
  recipeOf(row: PlannedRow): Recipe | undefined {
    if (!row.recipe) return undefined;
    const scaled = scaleRecipe(row.recipe, scaleOf(this.o.preset));
    if (!this.o.overrides || Object.keys(this.o.overrides).length === 0) return scaled;
    const sources = { ...scaled.sources };
    for (const k of Object.keys(this.o.overrides)) sources[k] = "this notebook's parameter cell";
    return { ...scaled, config: { ...scaled.config, ...this.o.overrides }, sources };
  }

  /** Why a row will not run here, or undefined when it will. */
  blocked(row: PlannedRow): string | undefined {
    if (!row.recipe) return row.unavailable ?? 'no recipe';
    const d = this.data.get(row.recipe.task);
    // The cell says it in a few words; dataTable() says which files are missing and how to get them.
    return typeof d === 'string' ? `data not on this machine (${task(row.recipe.task).title}; see the data table)` : undefined;
  }

  private trainExamples(): number | undefined {
    return scaleOf(this.o.preset).trainExamples;
  }

  /** Every hyperparameter of `row`'s recipe (default: the first runnable row) with its source. */
  recipeTable(row: PlannedRow | undefined = this.rows.find((r) => r.recipe)): SimpleTable {
    const r = row && this.recipeOf(row);
    if (!r) return { columns: ['setting', 'value', 'source'], rows: [], caption: 'no runnable row' };
    const flat: Array<[string, unknown]> = [];
    const walk = (prefix: string, v: unknown) => {
      if (v && typeof v === 'object' && !Array.isArray(v) && prefix !== '') {
        for (const [k, x] of Object.entries(v)) walk(`${prefix}.${k}`, x);
      } else flat.push([prefix, v]);
    };
    for (const [k, v] of Object.entries(r.config)) walk(k, v);
    const source = (k: string) => {
      for (let p = k; p; p = p.includes('.') ? p.slice(0, p.lastIndexOf('.')) : '') if (r.sources[p]) return r.sources[p];
      return '';
    };
    const limit = this.trainExamples();
    const rows: SimpleTable['rows'] = flat.map(([k, v]) => [k, typeof v === 'object' ? JSON.stringify(v) : String(v), source(k)]);
    if (limit !== undefined) rows.push(['trainExamples', String(limit), `preset ${this.o.preset}: the first ${limit} training examples`]);
    return { caption: `${r.name}: ${r.title}`, columns: ['setting', 'value', 'source'], rows };
  }

  /** Per task: its splits and sizes, or what is missing and how to get it. */
  dataTable(): SimpleTable {
    const rows: SimpleTable['rows'] = [];
    for (const [name, d] of this.data) {
      const limit = this.trainExamples();
      if (typeof d === 'string') rows.push([task(name).title, '', '', '', `not on this machine: ${d}`]);
      else rows.push([task(name).title, limit !== undefined ? `${Math.min(limit, d.train.items.length)} of ${d.train.items.length}` : d.train.items.length, `${d.dev.rows} (${d.dev.name})`, `${d.test.rows} (${d.test.name})`, 'here']);
    }
    return { caption: 'Training data (examples) and evaluation sets (pairs)', columns: ['task', 'train', 'dev', 'test', 'where'], rows };
  }

  /** Steps, tokens and the estimated time of each runnable row (from two measured steps each). */
  async costTable(): Promise<SimpleTable> {
    const rows: SimpleTable['rows'] = [];
    let total = 0;
    for (const row of this.rows) {
      const why = this.blocked(row);
      const r = this.recipeOf(row);
      if (why || !r) {
        rows.push([row.row, '', '', '', why ?? '']);
        continue;
      }
      const c = await estimateCost(r, this.o.model, this.data.get(r.task) as TaskData, this.trainExamples());
      total += c.seconds * this.o.seeds.length;
      rows.push([row.row, c.steps, c.tokens, c.secondsPerStep.toFixed(3), `${(c.seconds * this.o.seeds.length).toFixed(0)} s for ${this.o.seeds.length} seed(s)`]);
    }
    return { caption: `Cost on this backend: about ${(total / 60).toFixed(1)} min in all (runs already finished are reused and cost nothing)`, columns: ['row', 'steps', 'tokens', 's / step', 'estimated'], rows };
  }

  /** Trains every runnable row at every seed (reusing finished runs, resuming interrupted ones). */
  async run(opts: { force?: boolean; live?: (label: string) => LiveHooks; log?: (line: string) => void; signal?: AbortSignal } = {}): Promise<PlannedRun[]> {
    this.runs.length = 0;
    for (const row of this.rows) {
      for (const seed of this.o.seeds) {
        const why = this.blocked(row);
        const recipe = this.recipeOf(row);
        if (why || !recipe) {
          this.runs.push({ row, seed, skipped: why });
          continue;
        }
        const hooks = opts.live?.(`${row.row} (seed ${seed})`);
        try {
          const run = await runRecipe({
            recipe,
            seed,
            model: this.o.model,
            data: this.data.get(recipe.task) as TaskData,
            trainExamples: this.trainExamples(),
            experiment: this.o.experiment,
            resultsDir: this.o.resultsDir,
            force: opts.force,
            paper: row.paper ? { test_spearman: row.paper } : undefined,
            paperNote: row.paper ? undefined : 'the paper prints no number for this cell',
            details: { ...this.o.details, tableRow: row.row, ...(row.group ? { tableGroup: row.group } : {}) },
            ...(this.o.probes ? { probes: this.o.probes } : {}),
            onStep: hooks?.onStep?.bind(hooks),
            onEval: hooks?.onEval?.bind(hooks),
            log: opts.log,
            signal: opts.signal,
          });
          this.runs.push({ row, seed, run });
        } finally {
          hooks?.close?.();
        }
      }
    }
    return this.runs;
  }

  /** The cells of the paper table and the runs that fill them (after `run()`). */
  cellSources(): CellSource[] {
    return this.rows.filter((row) => !row.offTable).map((row) => {
      const done = this.runs.filter((r) => r.row === row && r.run).map((r) => r.run!.run.record.runId);
      const reason = this.blocked(row);
      return {
        row: row.row,
        column: row.column,
        ...(row.group ? { group: row.group } : {}),
        ...(done.length > 0 ? { runs: { runIds: done } } : {}),
        ...(reason ? { reason } : {}),
      };
    });
  }
}
