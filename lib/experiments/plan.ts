/**
 * A paper table's plan — the one way every notebook trains: rows of the table, each filling one or
 * more cells with the run of a recipe (./recipes/), or marked with why it cannot run here. Every
 * notebook makes the same five calls:
 *
 *   const plan = await Plan.create(rows, { experiment, model: MODEL, preset, seeds, overrides: OVERRIDES, … });
 *   showTable(plan.recipeTable());      // every setting of a row's recipe with where its value comes from
 *   showTable(plan.dataTable());        // each data set: its size, or what is missing and how to get it
 *   showTable(await plan.costTable());  // steps, tokens and the time each row will take here
 *   await plan.run({ force, live });    // every row × seed: reused, resumed or trained (./run-recipe.ts)
 *   sideBySide(paperTable, readResults(…), plan.cellSources())  // ours beside the paper's (lib/report)
 *
 * What a row trains on: the data the notebook supplies under the row's `data` key (pairs an LLM
 * generated, a prompted corpus), else its recipe's task from the task table (./tasks.ts), loaded
 * once and fetched from the Hub where allowed. When that data is missing and the plan allows
 * stand-ins (the smoke preset), the row trains its stand-in instead — the row's own `standIn`
 * recipe, or the task's stand-in data — and every table and record says so; the paper preset never
 * stands in.
 *
 * How a recipe runs: shrunk to the preset's scale (./recipes/recipe.ts `scaleRecipe`), then the
 * parameter cell's overrides merged in key by key (./overrides.ts; `decoderOverrides` for rows that
 * train a decoder's adapters), each overridden value marked "override (parameter cell)". A value
 * applies to the rows whose recipes have its key; the others' recipe tables say why not, and a
 * row's label scopes a value to that row (./row-overrides.ts). A recipe
 * with an evaluation after training (AnglE Table 2) has its selected weights scored on the STS
 * suite (./trained-evaluation.ts), and that record fills the row's cells.
 *
 * A row may instead be an evaluation without training (`evaluation`, ./plan-evaluation.ts: a model,
 * its encoder, an evaluator — PromptEOL's prompt rows and demonstration search, Flickr30k's
 * models, SentEval's transfer rows, the embedding geometry, notebook 00's pooling comparison): run
 * once in the row's place through the same run store, its records filling the row's cells, its
 * models loaded one at a time, an earlier training row's runs at hand (`trainedRuns`: the geometry
 * of their best checkpoints); under the rehearsal preset it rehearses its encoding.
 * The plan decides the rehearsal from its preset and resolves the results directory once
 * (`resultsDir`): nothing it runs reads either from the environment again.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { activeBackend } from '../backend/index.js';
import { resolveResultsDir } from '../config.js';
import { ensureDataset } from '../data/ensure.js';
import type { Evaluator } from '../eval/evaluator.js';
import type { PaperCell } from '../report/run-record.js';
import { trainingRunFromRecord, type TrainingRun } from '../report/figures/training-curves.js';
import type { LoadedRun } from '../report/results-reader.js';
import type { CellSource } from '../report/side-by-side.js';
import type { EvalLog, StepLog } from '../train/checkpoint.js';
import { InputError, UnavailableError } from '../util/errors.js';
import type { SimpleTable } from '../util/table.js';
import { estimateCost } from './cost.js';
import { applyOverrides, flattenSettings, PARAMETER_CELL, sourceOf, type RecipeOverrides } from './overrides.js';
import { applyTableOverrides, type RowOverrides, type TableOverrides } from './row-overrides.js';
import { presetByName, type RunScale } from './presets.js';
import { scaleRecipe, type Recipe } from './recipes/recipe.js';
import { runRecipe, type RecipeRun } from './run-recipe.js';
import type { SuiteRun } from './sts-suite-run.js';
import { loadTaskData, task, type TaskData, type TaskLoadOptions } from './tasks.js';
import { evaluateTrainedRun, type SuiteScope } from './trained-evaluation.js';
import { h100Calibration } from './rehearsal/calibration.js';
import { rehearseEncoding, stsSuiteTexts } from './rehearsal/encode.js';
import { promptFor } from '../embed/prompt-encoder.js';
import { rehearsalModel, type RehearsalModelSpec } from './rehearsal/models.js';
import { failedRehearsal, rehearseTraining } from './rehearsal/train.js';
import { rehearsalTable, writeRehearsalRows, type RehearsalRow } from './rehearsal/summary.js';
import { loadModelOrExplain } from './evaluation-models.js';
import { ModelSlot, type EvaluationOutcome, type RowEvaluation } from './plan-evaluation.js';
import { appendListedRuns, PLAN_ONLY_VARIABLE, planRunKey, planSelection, PlanWorkerStop, readPlanRunMarker, writePlanRunMarker, type ListedRun } from './plan-workers.js';

/** One cell of the paper table a row's run fills. */
export interface PlanCell {
  column: string;
  /** The record metric that fills it (default 'test_spearman'). */
  metric?: string;
  /** The paper's number, copied into the run records. */
  paper?: PaperCell;
}

/** One row of a paper table and the recipe that reproduces it. */
export interface PlanRow {
  /** The paper's row label, as printed (or our own label for an off-table row). */
  row: string;
  /** The row's group in the paper table, where labels repeat across groups. */
  group?: string;
  /** The paper table the row belongs to, for plans over several tables (`cellSources(table)`). */
  table?: string;
  cells: readonly PlanCell[];
  /** Absent for a row that cannot run here (then `unavailable` says why) and for an evaluation row. */
  recipe?: Recipe;
  /**
   * The second kind of row: an evaluation without training (a model, its encoder, an evaluator;
   * ./plan-evaluation.ts), run once (not per seed) in the row's place, its records filling the cells.
   */
  evaluation?: RowEvaluation;
  unavailable?: string;
  /** The key of the row's data among the plan's supplied data (default: the recipe's task). */
  data?: string;
  /** The model the row trains from (default the plan's `model`; e.g. the decoder of a LoRA row). */
  model?: string;
  /** How the row's task data is loaded (e.g. a smoke cap on the evaluation pairs of a slow decoder). */
  taskOptions?: TaskLoadOptions;
  /** Trained instead when the row's data is missing and stand-ins are allowed (never under paper). */
  standIn?: Recipe;
  /** The part of the STS suite the row's evaluation after training runs (a smoke shortcut). */
  suite?: SuiteScope;
  /** Trained and shown, but not a cell of the paper table. */
  offTable?: boolean;
}

export interface PlanOptions {
  /** results/<experiment>/ holds the runs. */
  experiment: string;
  /** A Hub id or model directory: the notebook's MODEL. */
  model: string;
  dataDir?: string;
  /** The preset whose run size applies ('smoke', 'paper', ...); none: the recipes' own size. */
  preset?: string;
  seeds: readonly number[];
  /**
   * The parameter cell's overrides (./row-overrides.ts): each value applies to the rows whose
   * recipes have its key (the recipe tables of the others say why not); a row's label as a key
   * scopes its settings to that row.
   */
  overrides?: TableOverrides;
  /** Overrides of the rows that train a decoder's adapters, applied after `overrides`. */
  decoderOverrides?: RecipeOverrides;
  /** Training data by key, or why it is missing (a sentence): rows name it in `data`. */
  data?: Readonly<Record<string, TaskData | string>>;
  /** How every task's data is loaded (e.g. `allowSample` for wiki1m's sample, `testPairsPerSet`). */
  taskOptions?: TaskLoadOptions;
  /** Train a row's stand-in when its data is missing (default: under the smoke preset only). */
  standIns?: boolean;
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
  row: PlanRow;
  seed: number;
  /** The training run, unless the row could not run (then `skipped` says why). */
  run?: RecipeRun;
  /** The suite evaluation of the run's selected weights (rows whose recipe asks for one). */
  evaluation?: SuiteRun;
  /** Why the evaluation after training could not run. */
  evaluationSkipped?: string;
  /** What stood in for the row's data or recipe. */
  standIn?: string;
  skipped?: string;
  /** Under the rehearsal preset: the row's rehearsal (./rehearsal/), instead of a run. */
  rehearsal?: RehearsalRow;
  /** The run's plan-run key (./plan-workers.ts): what a worker or a Slurm task runs it by. */
  planKey?: string;
  /** An evaluation row's outcome: its records, or why it has none. */
  evaluated?: EvaluationOutcome;
}

/** A row's data: loaded, or why not; and whether a stand-in took its place. */
interface RowData {
  data?: TaskData;
  missing?: string;
  standIn?: string;
  /** The row's stand-in recipe, when that stood in (else the row trains its own recipe). */
  standInRecipe?: Recipe;
  title: string;
}

function scaleOf(preset: string | undefined): RunScale {
  return preset ? presetByName(preset).scale : {};
}

function firstLine(e: unknown): string {
  return (e as Error).message.split('\n')[0]!;
}

async function loadTask(name: Recipe['task'], which: 'own' | 'standIn', o: PlanOptions, extra: TaskLoadOptions | undefined): Promise<TaskData> {
  const t = task(name);
  const datasets = which === 'own' ? t.datasets : (t.standIn?.datasets ?? []);
  // A failed download is not the end: the data root may still hold what the loader accepts (a
  // sample it is allowed to use, a copy in another layout); the loader's own error says what to do.
  if (o.download ?? true) {
    for (const id of datasets) {
      try {
        await ensureDataset(id, { dataDir: o.dataDir });
      } catch (e) {
        if (!(e instanceof InputError) && !(e instanceof UnavailableError)) throw e;
      }
    }
  }
  return loadTaskData(name, { dataDir: o.dataDir, ...o.taskOptions, ...extra }, which);
}

export class Plan {
  readonly runs: PlannedRun[] = [];
  /** Where the runs are recorded: the option, else ANGLE_RESULTS_DIR; resolved once, here. */
  readonly resultsDir: string;

  private constructor(
    readonly rows: readonly PlanRow[],
    readonly o: PlanOptions,
    private readonly rowData: Map<PlanRow, RowData>,
  ) {
    this.resultsDir = resolveResultsDir(o.resultsDir);
    // Every row's recipe with the overrides applied, once: an override that applies to no row throws here, in the plan's cell.
    const runnable = rows.filter((r) => r.recipe);
    const scale = scaleOf(o.preset);
    const applied = applyTableOverrides(runnable.map((r) => ({ label: r.row, recipe: scaleRecipe(rowData.get(r)?.standInRecipe ?? r.recipe!, scale) })), o.overrides);
    runnable.forEach((r, i) => this.overridden.set(r, applied[i]!));
  }

  /** Each runnable row's recipe with the parameter cell's overrides, and what of them did not apply to it. */
  private readonly overridden = new Map<PlanRow, RowOverrides>();

  /** Loads (and, where allowed, downloads) the data of every row, once per data set. */
  static async create(rows: readonly PlanRow[], o: PlanOptions): Promise<Plan> {
    const standIns = o.standIns ?? o.preset === 'smoke';
    const cache = new Map<string, RowData>();
    const out = new Map<PlanRow, RowData>();
    for (const row of rows) {
      if (!row.recipe) continue;
      const id = `${row.data ?? `task:${row.recipe.task}`}\u0000${JSON.stringify(row.taskOptions ?? {})}\u0000${row.standIn?.name ?? ''}`;
      let d = cache.get(id);
      if (!d) {
        d = await Plan.loadRowData(row, o, standIns);
        cache.set(id, d);
      }
      out.set(row, d);
    }
    return new Plan(rows, o, out);
  }

  private static async loadRowData(row: PlanRow, o: PlanOptions, standIns: boolean): Promise<RowData> {
    const recipe = row.recipe!;
    if (row.data !== undefined) {
      const d = o.data?.[row.data];
      const title = row.data;
      if (d === undefined) return { missing: `no training data '${row.data}' was supplied`, title };
      return typeof d === 'string' ? { missing: d, title } : { data: d, title };
    }
    const t = task(recipe.task);
    try {
      return { data: await loadTask(recipe.task, 'own', o, row.taskOptions), title: t.title };
    } catch (e) {
      if (!(e instanceof InputError) && !(e instanceof UnavailableError)) throw e;
      const missing = firstLine(e);
      if (!standIns) return { missing, title: t.title };
      // The row's own stand-in recipe first, else the task's stand-in data.
      const alt = row.standIn;
      try {
        if (alt) {
          const data = await loadTask(alt.task, 'own', o, row.taskOptions);
          return { data, standInRecipe: alt, standIn: `${alt.name} (${alt.title}), because ${t.title} is not here`, title: t.title };
        }
        if (t.standIn) {
          const data = await loadTask(recipe.task, 'standIn', o, row.taskOptions);
          return { data, standIn: `${t.standIn.title} (${t.title} is not here)`, title: t.title };
        }
      } catch (e2) {
        if (!(e2 instanceof InputError) && !(e2 instanceof UnavailableError)) throw e2;
        return { missing: `${missing}; its stand-in is missing too: ${firstLine(e2)}`, title: t.title };
      }
      return { missing, title: t.title };
    }
  }

  private trainExamples(): number | undefined {
    return scaleOf(this.o.preset).trainExamples;
  }

  /** The model a row trains from. */
  modelOf(row: PlanRow): string {
    return row.model ?? this.o.model;
  }

  /** A row's recipe as it will run: its stand-in where that stood in, shrunk to the preset's size, with the overrides applied. */
  recipeOf(row: PlanRow): Recipe | undefined {
    let r = this.overridden.get(row)?.recipe;
    if (!r) return undefined;
    if (r.lora) r = applyOverrides(r, this.o.decoderOverrides, PARAMETER_CELL);
    return r;
  }

  /** The override values that did not apply to a row's recipe, and why (its key is not a setting of that recipe). */
  notAppliedOf(row: PlanRow): ReadonlyArray<{ key: string; why: string }> {
    return this.overridden.get(row)?.notApplied ?? [];
  }

  /** Why a row will not run here, or undefined when it will. */
  blocked(row: PlanRow): string | undefined {
    if (row.evaluation) return row.unavailable;
    if (!row.recipe) return row.unavailable ?? 'no recipe';
    const d = this.rowData.get(row);
    if (!d?.missing) return undefined;
    // The cell says it in a few words; dataTable() says which files are missing and how to get them.
    return row.data !== undefined ? d.missing : `data not on this machine (${d.title}; see the data table)`;
  }

  /** What a reader must know about the data the rows train on: stand-ins and samples, one line each. */
  dataNotes(): string[] {
    const notes = new Set<string>();
    for (const d of this.rowData.values()) {
      if (d.standIn) notes.add(`⚠ STAND-IN: ${d.standIn} — not the paper's data`);
      if (d.data?.note) notes.add(d.data.note);
    }
    return [...notes];
  }

  /** What stands in for a row's data or recipe, if anything. */
  standInOf(row: PlanRow): string | undefined {
    return this.rowData.get(row)?.standIn;
  }

  /** Every setting of `row`'s recipe (default: the first runnable row) with its source; overridden values say so. */
  recipeTable(row: PlanRow | undefined = this.rows.find((r) => r.recipe && !this.blocked(r)) ?? this.rows.find((r) => r.recipe)): SimpleTable {
    const r = row && this.recipeOf(row);
    if (!r) return { columns: ['setting', 'value', 'source'], rows: [], caption: 'no runnable row' };
    const show = (v: unknown) => (typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v));
    const rows: SimpleTable['rows'] = flattenSettings(r.config as unknown as Record<string, unknown>).map(([k, v]) => [k, show(v), sourceOf(r.sources, k)]);
    if (r.lora) rows.push(...flattenSettings(r.lora as unknown as Record<string, unknown>, 'lora').map(([k, v]) => [k, show(v), sourceOf(r.sources, k)]));
    if (r.prompt) rows.push(['prompt', `${r.prompt.template} (sentences cut to ${r.prompt.sentenceMaxTokens === 'fit' ? "what max length leaves beside the template" : `${r.prompt.sentenceMaxTokens} tokens`})`, sourceOf(r.sources, 'prompt')]);
    if (r.positivesOnly) rows.push(['positivesOnly', `label >= ${r.positivesOnly.threshold}`, sourceOf(r.sources, 'positivesOnly')]);
    if (r.evaluation) {
      const { source, ...ev } = r.evaluation;
      rows.push(...flattenSettings(ev as Record<string, unknown>, 'evaluation').map(([k, v]) => [k, show(v), sourceOf(r.sources, k) || source]));
    }
    const limit = this.trainExamples();
    if (limit !== undefined) rows.push(['trainExamples', String(limit), `preset ${this.o.preset}: the first ${limit} training examples`]);
    const model = this.modelOf(row!);
    rows.unshift(['model', model, model === this.o.model ? 'MODEL (parameter cell)' : "the row's own model"]);
    const standIn = this.standInOf(row!);
    const notes = [
      ...(standIn ? [`⚠ STAND-IN: ${standIn} — not the paper's data`] : []),
      ...(r.deviations ?? []).map((d) => `differs from the authors' run: ${d}`),
      ...this.notAppliedOf(row!).map((n) => `override ${n.key} not applied to ${row!.row}: ${n.why}`),
    ];
    return { caption: `${r.name}: ${r.title}`, columns: ['setting', 'value', 'source'], rows, ...(notes.length ? { notes } : {}) };
  }

  /** The recipe table of every training row, once per distinct run (rows that are one run show once), in the rows' order. */
  recipeTables(): SimpleTable[] {
    const seen = new Set<string>();
    return this.rows
      .filter((row) => {
        const r = this.recipeOf(row);
        return r !== undefined && !seen.has(this.runIdentity(row, r)) && (seen.add(this.runIdentity(row, r)), true);
      })
      .map((row) => this.recipeTable(row));
  }

  /** Per data set the rows train on: its size, the dev and test sets, a stand-in, or what is missing and how to get it. */
  dataTable(): SimpleTable {
    const limit = this.trainExamples();
    const rows: SimpleTable['rows'] = [];
    const seen = new Set<RowData>();
    for (const [row, d] of this.rowData) {
      if (seen.has(d)) continue;
      seen.add(d);
      const name = row.data ?? d.title;
      if (!d.data) {
        rows.push([name, '', '', '', `not on this machine: ${d.missing}`]);
        continue;
      }
      const n = d.data.train.items.length;
      rows.push([
        name,
        `${limit !== undefined ? `${Math.min(limit, n)} of ` : ''}${n} ${d.data.train.kind} (${d.data.train.name})`,
        `${d.data.dev.rows} (${d.data.dev.name})`,
        `${d.data.test.rows} (${d.data.test.name})`,
        [d.standIn ? `⚠ STAND-IN: ${d.standIn}` : 'here', d.data.note].filter(Boolean).join('; '),
      ]);
    }
    return { caption: 'Training data (examples) and evaluation sets (pairs)', columns: ['data', 'train', 'dev', 'test', 'where'], rows };
  }

  /**
   * Steps, tokens and the estimated time of each runnable row (two measured steps each); a recipe
   * that fills several rows costs once, and a row whose estimate fails says why while the others go on.
   */
  async costTable(): Promise<SimpleTable> {
    const rows: SimpleTable['rows'] = [];
    // A worker lists or runs some of the runs (./plan-workers.ts): two measured steps a row would only delay it.
    if (planSelection()) return { caption: 'Cost: not estimated in a worker (the runs are spread over workers)', columns: ['row', 'steps', 'tokens', 's / step', 'estimated'], rows };
    let total = 0;
    const seen = new Map<string, string>();
    const resultsDir = this.resultsDir;
    const evaluations = new Map<string, string>();
    for (const row of this.rows) {
      const why = this.blocked(row);
      if (row.evaluation && !why) {
        // An evaluation costs its encoding only; the run store reuses a finished one.
        const again = evaluations.get(row.evaluation.identity);
        if (!again) evaluations.set(row.evaluation.identity, row.row);
        rows.push([row.row, '', '', '', again ? `the same evaluation as '${again}' above` : `no training: ${row.evaluation.summary} (${row.evaluation.recorded === false ? 'nothing recorded: measured again each run' : 'reused when it finished already'})`]);
        continue;
      }
      const r = this.recipeOf(row);
      if (why || !r) {
        rows.push([row.row, '', '', '', why ?? '']);
        continue;
      }
      const d = this.rowData.get(row)!;
      const id = this.runIdentity(row, r);
      const again = seen.get(id);
      if (again) {
        rows.push([row.row, '', '', '', `the same run as '${again}' above`]);
        continue;
      }
      seen.set(id, row.row);
      // Seeds whose run finished already (its plan-run marker, ./plan-workers.ts) are reused by
      // run(), so they cost nothing: only the others are estimated and counted.
      const finished = this.o.seeds.filter((seed) => readPlanRunMarker(resultsDir, this.o.experiment, planRunKey(this.o.experiment, id, seed)) !== undefined).length;
      const toRun = this.o.seeds.length - finished;
      if (toRun === 0) {
        rows.push([row.row, '', '', '', `finished already: reused, costs nothing (FORCE = true retrains)`]);
        continue;
      }
      try {
        const c = await estimateCost(r, this.modelOf(row), d.data!, this.trainExamples());
        total += c.seconds * toRun;
        const reused = finished > 0 ? `; ${finished} finished seed(s) reused` : '';
        rows.push([row.row, c.steps, c.tokens, c.secondsPerStep.toFixed(3), `${(c.seconds * toRun).toFixed(0)} s for ${toRun} seed(s)${r.evaluation ? ', plus the SentEval/MTEB evaluation' : ''}${reused}`]);
      } catch (e) {
        if (!(e instanceof InputError) && !(e instanceof UnavailableError)) throw e;
        rows.push([row.row, '', '', '', `no estimate: ${firstLine(e)}`]);
      }
    }
    return { caption: `Cost on this backend: about ${(total / 60).toFixed(1)} min in all for the runs not finished yet (finished ones are reused and cost nothing)`, columns: ['row', 'steps', 'tokens', 's / step', 'estimated'], rows };
  }

  private paperOf(row: PlanRow): Record<string, PaperCell> {
    return Object.fromEntries(row.cells.filter((c) => c.paper).map((c) => [c.metric ?? 'test_spearman', c.paper!]));
  }

  /** Trains every runnable row at every seed (reusing finished runs, resuming interrupted ones), then evaluates where the recipe asks. */
  async run(opts: { force?: boolean; live?: (label: string) => LiveHooks; log?: (line: string) => void; signal?: AbortSignal } = {}): Promise<PlannedRun[]> {
    // The experiment's folder exists once the plan ran, records or not (a table over it reads as empty, not as a typo).
    mkdirSync(join(this.resultsDir, this.o.experiment), { recursive: true });
    if (this.o.preset === 'rehearsal') return this.rehearse(opts.log);
    this.runs.length = 0;
    // A worker lists the plan's runs or runs some of them, then stops the notebook (./plan-workers.ts).
    const selection = planSelection();
    const listed = new Map<string, ListedRun>();
    const matched = new Set<string>();
    const resultsDir = this.resultsDir;
    // The evaluation rows' models, one loaded at a time: rows over the same model share its load.
    const slot = new ModelSlot((id) => loadModelOrExplain(id, { preset: this.o.preset }), opts.log);
    // A worker stopped by SIGTERM (a Slurm requeue, preemption, or the time limit's signal) ends its
    // training after the current step with a checkpoint, so the run resumes exactly where it stopped.
    const stop = selection && 'only' in selection ? new AbortController() : undefined;
    const onTerm = () => stop!.abort(new Error('SIGTERM: checkpoint written, run again to resume'));
    if (stop) process.on('SIGTERM', onTerm);
    const signal = stop ? (opts.signal ? AbortSignal.any([opts.signal, stop.signal]) : stop.signal) : opts.signal;
    try {
      // A recipe that fills several rows (one per paper version, a sweep's own setting) runs once.
      const done = new Map<string, PlannedRun>();
      const evaluated = new Map<string, EvaluationOutcome>();
      for (const row of this.rows) {
        if (row.evaluation) {
          // Workers run the training rows only; the evaluations run (or are reused) when the notebook renders.
          if (!selection) await this.runEvaluationRow(row, row.evaluation, evaluated, slot, opts);
          continue;
        }
        // Training needs the memory: the evaluations' model goes first.
        slot.dispose();
        for (const seed of this.o.seeds) {
          const why = this.blocked(row);
          const recipe = this.recipeOf(row);
          if (why || !recipe) {
            this.runs.push({ row, seed, skipped: why });
            continue;
          }
          const same = done.get(`${this.runIdentity(row, recipe)}\u0000${seed}`);
          if (same) {
            this.runs.push({ ...same, row });
            continue;
          }
          const planKey = planRunKey(this.o.experiment, this.runIdentity(row, recipe), seed);
          if (selection && 'list' in selection) {
            if (!listed.has(planKey)) listed.set(planKey, { experiment: this.o.experiment, key: planKey, label: `${this.rowLabel(row)} (seed ${seed})`, finished: readPlanRunMarker(resultsDir, this.o.experiment, planKey) !== undefined });
            continue;
          }
          if (selection && !selection.only.has(planKey)) continue;
          matched.add(planKey);
          const d = this.rowData.get(row)!;
          const paper = this.paperOf(row);
          const details = this.rowDetails(row, d.standIn);
          const hooks = opts.live?.(`${row.row} (seed ${seed})`);
          const planned: PlannedRun = { row, seed, planKey, ...(d.standIn ? { standIn: d.standIn } : {}) };
          try {
            planned.run = await runRecipe({
              recipe,
              seed,
              model: this.modelOf(row),
              data: d.data!,
              trainExamples: this.trainExamples(),
              experiment: this.o.experiment,
              resultsDir: this.o.resultsDir,
              force: opts.force,
              ...(Object.keys(paper).length > 0 ? { paper } : { paperNote: row.offTable ? 'off the paper table: no printed number' : 'the paper prints no number for this cell' }),
              details,
              ...(this.o.probes ? { probes: this.o.probes } : {}),
              onStep: hooks?.onStep?.bind(hooks),
              onEval: hooks?.onEval?.bind(hooks),
              log: opts.log,
              signal,
            });
          } catch (e) {
            // A model that is not on this machine (no Hub here) marks the row instead of stopping the notebook.
            if (!(e instanceof UnavailableError)) throw e;
            this.runs.push({ ...planned, skipped: firstLine(e) });
            continue;
          } finally {
            hooks?.close?.();
          }
          if (recipe.evaluation) {
            const ev = await evaluateTrainedRun({
              recipe,
              training: planned.run,
              seed,
              model: this.modelOf(row),
              experiment: this.o.experiment,
              resultsDir,
              dataDir: this.o.dataDir,
              scope: row.suite,
              paper,
              standIn: d.standIn,
              details,
              force: opts.force,
              log: opts.log,
            });
            if (typeof ev === 'string') planned.evaluationSkipped = ev;
            else planned.evaluation = ev;
          }
          this.runs.push(planned);
          done.set(`${this.runIdentity(row, recipe)}\u0000${seed}`, planned);
          if (!planned.evaluationSkipped) this.markFinished(resultsDir, planKey, `${this.rowLabel(row)} (seed ${seed})`, planned);
        }
      }
    } finally {
      slot.dispose();
      if (stop) process.off('SIGTERM', onTerm);
    }
    if (selection && 'list' in selection) {
      appendListedRuns(selection.list, [...listed.values()]);
      throw new PlanWorkerStop(`listed ${listed.size} run(s) of ${this.o.experiment} for the workers (${[...listed.values()].filter((r) => r.finished).length} finished already)`);
    }
    if (selection) {
      const unknown = [...selection.only].filter((k) => !matched.has(k));
      if (unknown.length > 0) {
        const keys = [...new Set(this.rows.flatMap((row) => { const r = this.recipeOf(row); return r && !this.blocked(row) ? this.o.seeds.map((seed) => planRunKey(this.o.experiment, this.runIdentity(row, r), seed)) : []; }))];
        throw new InputError(`${PLAN_ONLY_VARIABLE}: no run of ${this.o.experiment}'s plan has the key ${unknown.join(', ')}; its keys: ${keys.join(', ') || 'none (no row can run here)'}`);
      }
      const ran = this.runs.filter((r) => r.run || r.skipped);
      throw new PlanWorkerStop(`ran ${ran.length} run(s) of ${this.o.experiment}: ${ran.map((r) => `${this.rowLabel(r.row)} (seed ${r.seed}) ${r.run ? r.run.status : `skipped: ${r.skipped}`}`).join('; ')}`);
    }
    return this.runs;
  }

  /** A row's details in its records: the plan's, the row's table, label and group, and what stood in. */
  private rowDetails(row: PlanRow, standIn?: string): Record<string, unknown> {
    return {
      ...this.o.details,
      ...(row.table ? { table: row.table } : {}),
      tableRow: row.row,
      ...(row.group ? { tableGroup: row.group } : {}),
      ...(standIn ? { standIn } : {}),
    };
  }

  /** Runs an evaluation row once (a row with the same evaluation shares its outcome). */
  private async runEvaluationRow(row: PlanRow, ev: RowEvaluation, done: Map<string, EvaluationOutcome>, slot: ModelSlot, opts: { force?: boolean; log?: (line: string) => void }): Promise<void> {
    const seed = 0;
    const why = this.blocked(row);
    if (why) {
      this.runs.push({ row, seed, skipped: why });
      return;
    }
    let outcome = done.get(ev.identity);
    if (!outcome) {
      outcome = await ev.run({
        experiment: this.o.experiment,
        resultsDir: this.resultsDir,
        dataDir: this.o.dataDir,
        force: opts.force,
        log: opts.log,
        details: this.rowDetails(row),
        paper: this.paperOf(row),
        load: (id, note) => slot.load(id, note),
        trainedRuns: (training) => this.runs.filter((r) => r.row === training && r.run).map((r) => ({ seed: r.seed, run: r.run! })),
      });
      done.set(ev.identity, outcome);
    }
    this.runs.push({ row, seed, evaluated: outcome });
  }

  /** An evaluation row's outcome (after `run()`): its records, or why it has none. */
  outcomeOf(row: PlanRow): EvaluationOutcome | undefined {
    return this.runs.find((r) => r.row === row && r.evaluated)?.evaluated;
  }

  /** The marker of a finished plan run (./plan-workers.ts): its records, and where it ran. */
  private markFinished(resultsDir: string, key: string, label: string, r: PlannedRun): void {
    const dir = join(resultsDir, this.o.experiment);
    const ref = (s: { status: string; run: LoadedRun }) => ({ runId: s.run.record.runId, file: relative(dir, s.run.file), status: s.status });
    writePlanRunMarker(resultsDir, this.o.experiment, { key, label, training: ref(r.run!), ...(r.evaluation ? { evaluation: ref(r.evaluation) } : {}) });
  }

  /**
   * A row's name in legends: its label, with its columns where another row of the same table has
   * the same label (Table 3's SimCSE-BERT trains once per task: "SimCSE-BERT · MRPC"), and its
   * paper file's number where the plan's rows come from more than one.
   */
  rowName(row: PlanRow): string {
    const twin = this.rows.some((x) => x !== row && x.row === row.row && x.table === row.table && x.group === row.group);
    return twin ? `${this.rowLabel(row)} · ${row.cells.map((c) => c.column).join(', ')}` : this.rowLabel(row);
  }

  /** A row's name, with its paper file's number (000 of 000_c0fdd0968b088fcd.txt) where the plan's rows come from more than one. */
  private rowLabel(row: PlanRow): string {
    return `${row.row}${row.table && this.rows.some((x) => x.table !== row.table) ? ` [${row.table.replace(/_[0-9a-f]{16}\.txt$/, '')}]` : ''}`;
  }

  /**
   * Under the `rehearsal` preset, `run()` rehearses instead of training (./rehearsal/train.ts): each
   * distinct run once, at the paper's shapes (the recipe unshrunk, the model at its real size with
   * random weights, the data here or synthetic), one step, its peak memory and time projected onto
   * one H100; the rows go to the rehearsal summary (results/rehearsal/summary.json) and the plan's
   * runs carry them. A row that cannot be rehearsed says why and the others go on.
   */
  private async rehearse(log?: (line: string) => void): Promise<PlannedRun[]> {
    this.runs.length = 0;
    const { ratio } = await h100Calibration();
    const specs = new Map<string, RehearsalModelSpec | string>();
    const rows: RehearsalRow[] = [];
    const done = new Map<string, RehearsalRow>();
    const backend = activeBackend()?.name ?? 'unknown';
    const evaluated = new Map<string, PlannedRun>();
    for (const row of this.rows) {
      if (row.evaluation && !this.blocked(row)) {
        // An evaluation row rehearses its encoding (its rows go to the summary as they are made).
        const ev = row.evaluation;
        let planned = evaluated.get(ev.identity);
        if (!planned) {
          const r = await ev.rehearse({ notebook: this.o.experiment, resultsDir: this.resultsDir, dataDir: this.o.dataDir, log });
          for (const x of r.rows) log?.(`${x.run}: rehearsed — ${x.status}${x.why ? ` (${x.why})` : ''}; H100 peak ${(x.projectedPeakBytesH100 / 1e9).toFixed(1)} GB, ${x.projectedHoursH100.toFixed(2)} h projected`);
          const failed = r.rows.find((x) => x.status === 'failed');
          planned = {
            row,
            seed: 0,
            evaluated: { runs: [], ...(r.why ? { why: r.why } : {}), ...(r.result !== undefined ? { result: r.result } : {}) },
            ...(r.rows[0] ? { rehearsal: r.rows[0] } : {}),
            ...(failed ? { skipped: `rehearsal failed: ${failed.why}` } : r.why ? { skipped: r.why } : {}),
          };
          evaluated.set(ev.identity, planned);
        }
        this.runs.push({ ...planned, row });
        continue;
      }
      const recipe = this.recipeOf(row);
      if (!recipe) {
        this.runs.push({ row, seed: this.o.seeds[0] ?? 42, skipped: this.blocked(row) });
        continue;
      }
      const id = this.runIdentity(row, recipe);
      let r = done.get(id);
      if (!r) {
        const model = this.modelOf(row);
        if (!specs.has(model)) specs.set(model, await rehearsalModel(model).catch((e: Error) => e.message.split('\n')[0]));
        const spec = specs.get(model)!;
        const run = `${this.rowLabel(row)}: ${recipe.name}`;
        r =
          typeof spec === 'string'
            ? failedRehearsal(this.o.experiment, run, recipe, model, spec, backend)
            : await rehearseTraining({ notebook: this.o.experiment, run, recipe, spec, data: this.rowData.get(row)?.data, calibration: ratio, backend });
        done.set(id, r);
        rows.push(r);
        log?.(`${run}: rehearsed — ${r.status}${r.why ? ` (${r.why})` : ''}; H100 peak ${(r.projectedPeakBytesH100 / 1e9).toFixed(1)} GB, ${r.projectedHoursH100.toFixed(2)} h projected`);
        // The evaluation after training (AnglE Table 2's suite) is part of the run: rehearsed too.
        const ev = recipe.evaluation;
        if (ev) {
          const texts = stsSuiteTexts(this.o.dataDir);
          await rehearseEncoding({
            notebook: this.o.experiment,
            run: `${run} → SentEval STS suite (${ev.pooling})`,
            model,
            texts: ev.prompt ? texts.map((t) => promptFor(t, ev.prompt!)) : texts,
            batchSize: recipe.lora ? 16 : Math.max(64, ev.sentevalBatchSize ?? 0),
            maxLength: ev.maxLength,
            resultsDir: this.resultsDir,
          });
        }
      }
      this.runs.push({ row, seed: this.o.seeds[0] ?? 42, rehearsal: r, ...(r.status === 'failed' ? { skipped: `rehearsal failed: ${r.why}` } : {}) });
    }
    writeRehearsalRows(this.resultsDir, this.o.experiment, rows);
    return this.runs;
  }

  /** The rehearsal's rows of this plan (after `run()` under the rehearsal preset), as a table. */
  rehearsalTable(): SimpleTable {
    const seen = new Set<RehearsalRow>();
    return rehearsalTable(this.runs.flatMap((r) => (r.rehearsal && !seen.has(r.rehearsal) && seen.add(r.rehearsal) ? [r.rehearsal] : [])), `Rehearsal of ${this.o.experiment}: each run at the paper's shapes, projected onto one H100`);
  }

  /** What makes two rows the same run: the model, the data and the recipe as it runs. */
  private runIdentity(row: PlanRow, r: Recipe): string {
    return `${this.modelOf(row)}\u0000${row.data ?? r.task}\u0000${JSON.stringify(row.taskOptions ?? {})}\u0000${JSON.stringify({ ...r, sources: undefined, title: undefined })}`;
  }

  /** The finished runs of a row (after `run()`). */
  runsOf(row: PlanRow): RecipeRun[] {
    return this.runs.filter((r) => r.row === row && r.run).map((r) => r.run!);
  }

  /** The records that fill a row's cells: an evaluation row's, the suite evaluations where the recipe asks for one, else the training records. */
  recordsOf(row: PlanRow): LoadedRun[] {
    return this.runs.filter((r) => r.row === row).flatMap((r) => (r.evaluated ? r.evaluated.runs.map((x) => x.run) : r.evaluation ? [r.evaluation.run] : r.run && !row.recipe?.evaluation ? [r.run.run] : []));
  }

  /** Every record that fills a cell, once (after `run()`): what a side-by-side table reads (`report.frameOfRuns`). */
  records(): LoadedRun[] {
    const seen = new Set<string>();
    return this.rows.flatMap((row) => this.recordsOf(row)).filter((r) => !seen.has(r.file) && (seen.add(r.file), true));
  }

  /**
   * The runs' evaluations after training, labelled by recipe and seed, and the evaluation rows'
   * records, labelled as they were run (for SentEval/MTEB tables); `table`: only that table's rows.
   */
  evaluations(table?: string): Array<{ label: string; run: LoadedRun }> {
    const seen = new Set<string>();
    const once = (run: LoadedRun) => !seen.has(run.file) && seen.add(run.file);
    return this.runs
      .filter((r) => table === undefined || r.row.table === table)
      .flatMap((r) => [
        ...(r.evaluation && once(r.evaluation.run) ? [{ label: `${r.row.recipe!.name} (seed ${r.seed})`, run: r.evaluation.run }] : []),
        ...(r.evaluated?.runs.filter((x) => once(x.run)).map((x) => ({ label: x.label, run: x.run })) ?? []),
      ]);
  }

  /** Every training run once, as the training-curves figure takes them (lib/report figures). */
  trainingCurves(): TrainingRun[] {
    const seen = new Set<string>();
    return this.runs.flatMap((r) => (r.run && !seen.has(r.run.run.file) && seen.add(r.run.run.file) ? [trainingRunFromRecord(r.run.run.record, { name: `${this.rowName(r.row)} (seed ${r.seed})` })] : []));
  }

  /**
   * Every run once: recipe, seed, the training (reused / resumed / trained), stand-in, and its
   * evaluation after training or why not; where workers ran them (`npm run notebooks -- --gpus`, a
   * Slurm array), a column says which worker, with its log and job (paths under the results folder).
   */
  runsTable(caption = 'Runs'): SimpleTable {
    const seen = new Set<string>();
    const rows: SimpleTable['rows'] = [];
    const resultsDir = this.resultsDir;
    const ranBy: string[] = [];
    for (const r of this.runs) {
      if (!r.run || seen.has(r.run.run.file)) continue;
      seen.add(r.run.run.file);
      const ev = r.row.recipe?.evaluation ? (r.evaluation ? `${r.evaluation.status} ${r.evaluation.run.record.runId}` : (r.evaluationSkipped ?? 'not evaluated')) : '(the training record)';
      rows.push([`${r.row.row}: ${this.recipeOf(r.row)?.name ?? 'no recipe'} (seed ${r.seed})`, `${r.run.status} ${r.run.run.record.runId}`, this.recipeOf(r.row)?.evaluation?.pooling ?? String(r.run.run.record.config.pooling ?? ''), r.standIn ?? '', ev]);
      const w = r.planKey ? readPlanRunMarker(resultsDir, this.o.experiment, r.planKey)?.worker : undefined;
      ranBy.push(w ? Object.entries(w).map(([k, v]) => `${k}: ${v}`).join('; ') : '');
    }
    // The column only where a worker ran something: a notebook run by hand shows the table it always did.
    if (ranBy.some(Boolean)) {
      return { caption, columns: ['row: recipe (seed)', 'training', 'evaluated as', 'stood in', 'evaluation', 'ran by (paths under the results folder)'], rows: rows.map((row, i) => [...row, ranBy[i]!]) };
    }
    return { caption, columns: ['row: recipe (seed)', 'training', 'evaluated as', 'stood in', 'evaluation'], rows };
  }

  /** The rows that did not run here, with the cells they leave empty and why. */
  skippedTable(): SimpleTable {
    const seen = new Set<PlanRow>();
    const rows = this.runs.filter((r) => r.skipped && !seen.has(r.row) && seen.add(r.row)).map((r) => [r.row.row, r.row.cells.map((c) => c.column).join(', '), r.skipped!]);
    return { caption: rows.length ? 'Rows that did not run here' : 'Every row ran', columns: ['row', 'cells', 'why'], rows };
  }

  /** The PEFT adapter folder of a LoRA run's selected weights (written when its evaluation ran). */
  adapterDirOf(r: PlannedRun): string | undefined {
    if (!r.run || !r.row.recipe?.lora) return undefined;
    const dir = join(this.resultsDir, this.o.experiment, 'runs', r.run.key, 'adapter');
    return existsSync(join(dir, 'adapter_config.json')) ? dir : undefined;
  }

  /**
   * The cells of the paper table and the runs that fill them (after `run()`): every row's, or those
   * of one `table`, or of rows matching `{ table, recipe }` (a recipe's rows in one paper version).
   */
  cellSources(filter?: string | { table?: string; recipe?: string }): CellSource[] {
    const f = typeof filter === 'string' ? { table: filter } : (filter ?? {});
    return this.rows
      .filter((row) => (f.table === undefined || row.table === f.table) && (f.recipe === undefined || row.recipe?.name === f.recipe) && !row.offTable)
      .flatMap((row) => {
        const records = this.recordsOf(row);
        const mine = this.runs.filter((r) => r.row === row);
        const ev = mine.find((r) => r.evaluated?.why)?.evaluated;
        const reason = this.blocked(row) ?? mine.find((r) => r.skipped)?.skipped ?? mine.find((r) => r.evaluationSkipped)?.evaluationSkipped ?? (ev ? (ev.short ?? ev.why) : undefined);
        return row.cells.map((c) => {
          const metric = c.metric ?? 'test_spearman';
          const have = records.filter((x) => typeof x.record.metrics[metric] === 'number');
          return {
            row: row.row,
            column: c.column,
            ...(row.group ? { group: row.group } : {}),
            ...(c.metric ? { metric: c.metric } : {}),
            ...(have.length > 0 ? { runs: { runIds: have.map((x) => x.record.runId) } } : {}),
            ...(have.length === 0 ? { reason: reason ?? (records.length > 0 ? `not evaluated here (${metric === 'avg' ? 'needs all seven tasks' : 'task not run'})` : 'not run') } : reason ? { reason } : {}),
          };
        });
      });
  }
}
