/**
 * A paper table's training plan over data the notebook supplies — pairs an LLM generated (AnglE
 * Table 5), a corpus sample (SimACE's wiki1m), a task's texts put into prompts (PromptEOL) —
 * instead of a registered task (./table-plan.ts `TablePlan` loads those itself). The same parts:
 *
 * - rows: a paper row and the cells its run fills (a column and the record metric that fills it,
 *   e.g. SimACE Table 1's STS12 … Avg. from one run's SentEval evaluation), the recipe, the key of
 *   its data in the supplied map, optionally LoRA adapters (./run-lora-recipe.ts), or why it cannot
 *   run here; rows may belong to different paper tables (a sweep's rows to SimACE Table 14);
 * - `recipeTable()`, `dataTable()`, `costTable()`, `run()` (reusing finished runs, resuming
 *   interrupted ones), `cellSources(table)` for lib/report's side-by-side tables.
 *
 * Recipes are shrunk to the preset's scale and the notebook's overrides apply, as in TablePlan.
 */
import { UnavailableError } from '../util/errors.js';
import type { SimpleTable } from '../util/table.js';
import type { LoraConfig } from '../models/adapters/lora.js';
import type { CellSource } from '../report/side-by-side.js';
import type { PaperCell } from '../report/run-record.js';
import type { TrainerConfig } from '../train/trainer.js';
import { estimateCost } from './cost.js';
import { presetByName, type RunScale } from './presets.js';
import { scaleRecipe, type Recipe } from './recipes.js';
import { estimateLoraCost, runLoraRecipe } from './run-lora-recipe.js';
import { runRecipe, type RecipeRun } from './run-recipe.js';
import type { LiveHooks } from './table-plan.js';
import type { TaskData } from './tasks.js';

/** One cell a row's run fills. */
export interface SuppliedCell {
  column: string;
  /** The record metric (default 'test_spearman'). */
  metric?: string;
  paper?: PaperCell;
}

export interface SuppliedRow {
  /** The paper's row label, as printed (or our own label for an off-table row). */
  row: string;
  group?: string;
  /** The paper table the row belongs to, e.g. 'Table 14' (cellSources filters by it). */
  table: string;
  cells: readonly SuppliedCell[];
  recipe?: Recipe;
  /** The key of its training data in the plan's data. */
  data?: string;
  /** Train through LoRA adapters instead of every weight. */
  lora?: LoraConfig;
  /** Why it cannot run here (a row without a recipe). */
  unavailable?: string;
  /** Trained and shown, but not a cell of the paper table. */
  offTable?: boolean;
}

export interface SuppliedDataPlanOptions {
  experiment: string;
  /** A Hub id or model directory. */
  model: string;
  /** The preset whose run size applies ('smoke', 'paper'); none: the recipes' own size. */
  preset?: string;
  seeds: readonly number[];
  overrides?: Partial<TrainerConfig>;
  resultsDir?: string;
  details?: Record<string, unknown>;
}

export interface SuppliedRun {
  row: SuppliedRow;
  seed: number;
  run?: RecipeRun;
  skipped?: string;
}

function scaleOf(preset: string | undefined): RunScale {
  return preset ? presetByName(preset).scale : {};
}

export class SuppliedDataPlan {
  readonly runs: SuppliedRun[] = [];

  /** `data`: the training data by key, or why it is missing (a sentence). */
  constructor(
    readonly rows: readonly SuppliedRow[],
    readonly data: Readonly<Record<string, TaskData | string>>,
    readonly o: SuppliedDataPlanOptions,
  ) {}

  private trainExamples(): number | undefined {
    return scaleOf(this.o.preset).trainExamples;
  }

  /** A row's recipe as it will run: shrunk to the preset's size, with the overrides applied. */
  recipeOf(row: SuppliedRow): Recipe | undefined {
    if (!row.recipe) return undefined;
    const scaled = scaleRecipe(row.recipe, scaleOf(this.o.preset));
    if (!this.o.overrides || Object.keys(this.o.overrides).length === 0) return scaled;
    const sources = { ...scaled.sources };
    for (const k of Object.keys(this.o.overrides)) sources[k] = "this notebook's parameter cell";
    return { ...scaled, config: { ...scaled.config, ...this.o.overrides }, sources };
  }

  /** Why a row will not run here, or undefined when it will. */
  blocked(row: SuppliedRow): string | undefined {
    if (!row.recipe) return row.unavailable ?? 'no recipe';
    if (row.data === undefined) return 'no training data named';
    const d = this.data[row.data];
    if (d === undefined) return `no training data '${row.data}' was supplied`;
    return typeof d === 'string' ? d : undefined;
  }

  /** Every hyperparameter of `row`'s recipe (default: the first runnable row) with its source. */
  recipeTable(row: SuppliedRow | undefined = this.rows.find((r) => r.recipe)): SimpleTable {
    const r = row && this.recipeOf(row);
    if (!r) return { columns: ['setting', 'value', 'source'], rows: [], caption: 'no runnable row' };
    const flat: Array<[string, unknown]> = [];
    const walk = (prefix: string, v: unknown) => {
      if (v && typeof v === 'object' && !Array.isArray(v)) for (const [k, x] of Object.entries(v)) walk(`${prefix}.${k}`, x);
      else flat.push([prefix, v]);
    };
    for (const [k, v] of Object.entries(r.config)) {
      if (v && typeof v === 'object' && !Array.isArray(v)) walk(k, v);
      else flat.push([k, v]);
    }
    if (row!.lora) for (const [k, v] of Object.entries(row!.lora)) flat.push([`lora.${k}`, v]);
    const source = (k: string) => {
      for (let p = k; p; p = p.includes('.') ? p.slice(0, p.lastIndexOf('.')) : '') if (r.sources[p]) return r.sources[p];
      return '';
    };
    const rows: SimpleTable['rows'] = flat.map(([k, v]) => [k, typeof v === 'object' ? JSON.stringify(v) : String(v), source(k)]);
    const limit = this.trainExamples();
    if (limit !== undefined) rows.push(['trainExamples', String(limit), `preset ${this.o.preset}: the first ${limit} training examples`]);
    return { caption: `${r.name}: ${r.title}`, columns: ['setting', 'value', 'source'], rows };
  }

  /** Per training data: its size, the dev and test sets, or why it is missing. */
  dataTable(): SimpleTable {
    const limit = this.trainExamples();
    const rows: SimpleTable['rows'] = Object.entries(this.data).map(([key, d]) => {
      if (typeof d === 'string') return [key, '', '', '', `not here: ${d}`];
      const n = d.train.items.length;
      return [key, `${limit !== undefined ? `${Math.min(limit, n)} of ` : ''}${n} ${d.train.kind} (${d.train.name})`, `${d.dev.rows} (${d.dev.name})`, `${d.test.rows} (${d.test.name})`, 'here'];
    });
    return { caption: 'Training data (examples) and evaluation sets (pairs)', columns: ['data', 'train', 'dev', 'test', 'where'], rows };
  }

  /** Steps, tokens and the estimated time of each runnable row (two measured steps each). */
  async costTable(): Promise<SimpleTable> {
    const rows: SimpleTable['rows'] = [];
    let total = 0;
    const seen = new Map<string, string>();
    for (const row of this.rows) {
      const why = this.blocked(row);
      const r = this.recipeOf(row);
      if (why || !r) {
        rows.push([row.row, '', '', '', why ?? '']);
        continue;
      }
      // A recipe that appears in several rows (one run filling two tables) is measured and costs once.
      const id = `${row.data}\u0000${JSON.stringify(r.config)}\u0000${JSON.stringify(row.lora ?? null)}`;
      const again = seen.get(id);
      if (again) {
        rows.push([row.row, '', '', '', `the same run as '${again}' above`]);
        continue;
      }
      seen.set(id, row.row);
      const d = this.data[row.data!] as TaskData;
      const c = row.lora ? await estimateLoraCost(r, this.o.model, d, row.lora, this.trainExamples()) : await estimateCost(r, this.o.model, d, this.trainExamples());
      total += c.seconds * this.o.seeds.length;
      rows.push([row.row, c.steps, c.tokens, c.secondsPerStep.toFixed(3), `${(c.seconds * this.o.seeds.length).toFixed(0)} s for ${this.o.seeds.length} seed(s)`]);
    }
    return { caption: `Cost on this backend: about ${(total / 60).toFixed(1)} min in all (runs already finished are reused and cost nothing)`, columns: ['row', 'steps', 'tokens', 's / step', 'estimated'], rows };
  }

  /** Trains every runnable row at every seed (reusing finished runs, resuming interrupted ones). */
  async run(opts: { force?: boolean; live?: (label: string) => LiveHooks; log?: (line: string) => void; signal?: AbortSignal } = {}): Promise<SuppliedRun[]> {
    this.runs.length = 0;
    for (const row of this.rows) {
      for (const seed of this.o.seeds) {
        const why = this.blocked(row);
        const recipe = this.recipeOf(row);
        if (why || !recipe) {
          this.runs.push({ row, seed, skipped: why });
          continue;
        }
        const paper = Object.fromEntries(row.cells.filter((c) => c.paper).map((c) => [c.metric ?? 'test_spearman', c.paper!]));
        const hooks = opts.live?.(`${row.row} (seed ${seed})`);
        try {
          const common = {
            recipe,
            seed,
            model: this.o.model,
            data: this.data[row.data!] as TaskData,
            trainExamples: this.trainExamples(),
            experiment: this.o.experiment,
            resultsDir: this.o.resultsDir,
            force: opts.force,
            ...(Object.keys(paper).length > 0 ? { paper } : { paperNote: row.offTable ? 'off the paper table: no printed number' : 'the paper prints no number for this cell' }),
            details: { ...this.o.details, table: row.table, tableRow: row.row, ...(row.group ? { tableGroup: row.group } : {}) },
            onStep: hooks?.onStep?.bind(hooks),
            onEval: hooks?.onEval?.bind(hooks),
            log: opts.log,
            signal: opts.signal,
          };
          const run = row.lora ? await runLoraRecipe({ ...common, lora: row.lora }) : await runRecipe(common);
          this.runs.push({ row, seed, run });
        } catch (e) {
          // A model that is not on this machine (no Hub here) marks the row instead of stopping the notebook.
          if (!(e instanceof UnavailableError)) throw e;
          this.runs.push({ row, seed, skipped: e.message });
        } finally {
          hooks?.close?.();
        }
      }
    }
    return this.runs;
  }

  /** The finished runs of a row (after `run()`). */
  runsOf(row: SuppliedRow): RecipeRun[] {
    return this.runs.filter((r) => r.row === row && r.run).map((r) => r.run!);
  }

  /** The cells of paper table `table` and the runs that fill them (after `run()`). */
  cellSources(table: string): CellSource[] {
    return this.rows
      .filter((row) => row.table === table && !row.offTable)
      .flatMap((row) => {
        const done = this.runsOf(row).map((r) => r.run.record.runId);
        const skipped = this.runs.find((r) => r.row === row && r.skipped)?.skipped;
        const reason = this.blocked(row) ?? skipped;
        return row.cells.map((c) => ({
          row: row.row,
          column: c.column,
          ...(row.group ? { group: row.group } : {}),
          ...(c.metric ? { metric: c.metric } : {}),
          ...(done.length > 0 ? { runs: { runIds: done } } : {}),
          ...(reason ? { reason } : {}),
        }));
      });
  }
}
