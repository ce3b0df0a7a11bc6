/**
 * AnglE Table 2 (transfer STS) as a notebook runs it: the released checkpoints evaluated as their
 * authors evaluated them (../models/released.ts), the transfer recipes trained on NLI and evaluated
 * on their selected weights (./nli-recipes.ts), each evaluation a record of the SentEval suite with
 * the MTEB protocol beside it (./sts-suite-run.ts), and the pieces the notebook shows: the paper's
 * cells each evaluation fills (for lib/report's side-by-side tables, per paper version), the
 * SentEval/MTEB table, the legacy-pooling comparison, the recipe tables.
 *
 * Where a checkpoint or the data cannot be had here, the evaluation says why (`unavailable`) and
 * the rest goes on. Under the smoke preset, stand-ins exercise every path: the golden tiny BERT for
 * each released BERT checkpoint (saved as a sentence-transformers folder with mean pooling for
 * SBERT), the notebook's own trained adapter on the toy decoder for the released adapters, SICK's
 * entailment judgements for NLI (./nli-transfer-data.ts); the records say what stood in.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureDataset } from '../data/ensure.js';
import { STS_TASKS, type DatasetId, type StsTaskName } from '../data/registry.js';
import { PooledSentenceEncoder, sharedPoolingEncoders } from '../embed/encoder.js';
import { ANGLE_LLAMA_TEMPLATE } from '../embed/prompt-encoder.js';
import { parsePooling } from '../embed/pooling.js';
import { saveSentenceTransformer } from '../embed/sentence-transformer-export.js';
import type { SentenceEncoder } from '../embed/types.js';
import { addLora } from '../models/adapters/lora.js';
import { loadLoraAdapter, saveLoraAdapter } from '../models/adapters/peft.js';
import type { AdaptableModel } from '../models/adapters/types.js';
import { loadModel } from '../models/auto.js';
import { loadReleasedModel } from '../models/load-released.js';
import type { ReleasedCheckpoint, Table2RowRef } from '../models/released.js';
import type { LoadedModel } from '../models/types.js';
import { paperCell } from '../paper/lookup.js';
import type { LoadedRun } from '../report/results-reader.js';
import type { PaperCell } from '../report/run-record.js';
import type { CellSource } from '../report/side-by-side.js';
import { portableModelIdentity } from '../report/training-record.js';
import { bestModelDir, restoreBestWeights } from '../train/best-model.js';
import { InputError, UnavailableError } from '../util/errors.js';
import type { SimpleTable } from '../util/table.js';
import { estimateCost, type CostEstimate } from './cost.js';
import type { TransferRecipe, SuiteEvaluation } from './nli-recipes.js';
import { nliSourceFor, nliTransferData, type NliView } from './nli-transfer-data.js';
import { presetByName } from './presets.js';
import { promptedEncoder, promptedTaskData, type PromptSpec } from './prompted-task.js';
import { scaleRecipe } from './recipes.js';
import { estimateLoraCost, runLoraRecipe } from './run-lora-recipe.js';
import { runRecipe, type RecipeRun } from './run-recipe.js';
import { runStsSuite, TABLE2_AVERAGE, TABLE2_METRICS, type SuiteSettings } from './sts-suite-run.js';
import type { LiveHooks } from './table-plan.js';
import type { TaskData } from './tasks.js';

/** One way of evaluating a released checkpoint; `primary` is how its authors scored it. */
export interface ReleasedVariant {
  label: string;
  pooling?: string;
  sentevalBatchSize?: number;
  primary: boolean;
  source: string;
}

/**
 * The evaluations of a released checkpoint: its authors' setting, and for AnglE-BERT v1 both
 * cls_avg variants — angle_emb 0.1.x's (padding in the mean, SentEval batches of 16: how the
 * released model was scored) and the masked one of angle_emb ≥ 0.5.5.
 */
export function releasedVariants(e: ReleasedCheckpoint): ReleasedVariant[] {
  if (e.pooling === 'cls_avg') {
    return [
      { label: 'cls_avg_legacy, SentEval batches of 16 (angle_emb 0.1.x)', pooling: 'cls_avg_legacy', sentevalBatchSize: 16, primary: true, source: e.evaluationSource },
      { label: 'cls_avg, masked (angle_emb ≥ 0.5.5)', pooling: 'cls_avg', primary: false, source: 'the same pooling with padding left out of the mean (lib/embed/pooling.ts cls_avg)' },
    ];
  }
  return [{ label: e.pooling ?? "the folder's modules", pooling: e.pooling, primary: true, source: e.evaluationSource }];
}

/** One evaluation of the table: a released checkpoint's variant, or a trained run's selected weights. */
export interface Table2Evaluation {
  /** What the tables call it. */
  label: string;
  kind: 'released' | 'trained';
  entry?: ReleasedCheckpoint;
  recipe?: TransferRecipe;
  variant: string;
  primary: boolean;
  paperRows: readonly Table2RowRef[];
  seed?: number;
  /** What stood in for the checkpoint or the data (smoke). */
  standIn?: string;
  /** The suite record. */
  run?: LoadedRun;
  /** The training record, for trained rows. */
  training?: RecipeRun;
  /** The PEFT adapter directory, for LoRA rows. */
  adapterDir?: string;
  /** Why it did not run here. */
  unavailable?: string;
}

export interface Table2Options {
  experiment: string;
  resultsDir: string;
  dataDir?: string;
  /** 'smoke' runs the stand-ins (see the file comment). */
  preset?: string;
  /** The BERT to train from (and, under smoke, the stand-in checkpoint). */
  model: string;
  /** The decoder of the LLaMA rows (smoke: the toy llama2.c model). */
  llmModel: string;
  /** Folders this plan assembles (released checkpoints' linked files, stand-in folders). */
  workDir: string;
  hub?: Parameters<typeof loadReleasedModel>[1]['hub'];
  /** Converted (safetensors) adapter folders by released adapter id. */
  adapterDirs?: Record<string, string>;
  /** SentEval tasks of the decoder rows (default all seven; smoke: fewer, and the records say so). */
  decoderTasks?: readonly StsTaskName[];
  /** Decoder rows: the first N pairs of every evaluation set only (smoke; the records say so). */
  decoderPairsPerSet?: number;
  /** Decoder rows: the first N pairs of STS-B dev and test during training (smoke). */
  decoderEvalPairs?: number;
  /** SentEval tasks of the trained BERT rows' evaluations (default all seven; smoke: fewer, and the records say so). */
  trainedTasks?: readonly StsTaskName[];
  /** SentEval tasks of the evaluations that share no forward passes (SentEval-batched legacy pooling, sentence-transformers folders); default all seven. */
  costlyTasks?: readonly StsTaskName[];
  /** The notebook's parameter-cell overrides of every recipe. */
  overrides?: Partial<TransferRecipe['config']>;
  /** Overrides of the decoder (LoRA) recipes only, applied after `overrides`. */
  decoderOverrides?: Partial<TransferRecipe['config']>;
  force?: boolean;
  log?: (line: string) => void;
  live?: (label: string) => LiveHooks;
}

function isSmoke(o: Pick<Table2Options, 'preset'>): boolean {
  return o.preset === 'smoke';
}

/** A recipe at the preset's size: the preset's steps and batch cap, and (smoke) one micro-batch per step. */
export function scaleTransferRecipe(r: TransferRecipe, preset: string | undefined, overrides: Partial<TransferRecipe['config']> = {}): TransferRecipe {
  const scale = preset ? presetByName(preset).scale : {};
  const scaled = scaleRecipe(r, scale) as TransferRecipe;
  const config = { ...scaled.config };
  const sources = { ...scaled.sources };
  if (scale.maxBatchSize !== undefined && (config.gradAccumulation ?? 1) > 1) {
    config.gradAccumulation = 1;
    sources.gradAccumulation = `${r.sources.gradAccumulation}; one micro-batch per step at the preset's scale`;
  }
  if (scale.maxSteps !== undefined && config.checkpointEvery !== undefined && config.checkpointEvery > scale.maxSteps) config.checkpointEvery = scale.maxSteps;
  for (const k of Object.keys(overrides)) sources[k] = "this notebook's parameter cell";
  return { ...scaled, config: { ...config, ...overrides }, sources };
}

/** The paper's numbers of a row in one version, by our metric names. */
export function table2PaperCells(ref: Table2RowRef): Record<string, PaperCell> {
  const out: Record<string, PaperCell> = {};
  for (const { column, metric } of [...TABLE2_METRICS, TABLE2_AVERAGE]) {
    try {
      const c = paperCell({ paper: 'angle', table: 'Table 2', file: ref.file, group: ref.group, row: ref.row, column });
      out[metric] = { value: c.value, source: `${c.file}, Table 2, ${ref.group} / ${ref.row}, ${column}` };
    } catch (e) {
      // A cell this version prints as no number; a row or column that does not exist is a mistake.
      if (!(e instanceof InputError && / is not (a number|printed)/.test(e.message))) throw e;
    }
  }
  return out;
}

function suiteSettings(ev: SuiteEvaluation | ReleasedVariant, prompt?: { template: string; prepareText?: string }): SuiteSettings {
  return {
    pooling: ev.pooling ?? 'sentence-transformers',
    ...(ev.sentevalBatchSize !== undefined ? { sentevalBatchSize: ev.sentevalBatchSize } : {}),
    ...('maxLength' in ev && ev.maxLength !== undefined ? { maxLength: ev.maxLength } : {}),
    ...(prompt ? { prompt } : {}),
  };
}

function describeError(e: unknown): string {
  return (e as Error).message.split('\n')[0];
}

/** Runs an evaluation, or says why its data cannot be had here (the STS files missing, the Hub unreachable). */
async function evaluateOrExplain<T>(f: () => Promise<T>): Promise<T | string> {
  try {
    return await f();
  } catch (e) {
    if (!(e instanceof InputError) && !(e instanceof UnavailableError)) throw e;
    return `evaluation data not on this machine: ${describeError(e)}`;
  }
}

/** The decoder encoder of a prompt evaluation: last token of each prompt, left padding. */
function promptEncoder(m: LoadedModel, ev: { pooling?: string; maxLength?: number; prompt?: PromptSpec }): SentenceEncoder {
  const inner = new PooledSentenceEncoder(m, { pooling: ev.pooling ?? 'last', maxLength: Math.min(ev.maxLength ?? m.model.maxPositions, m.model.maxPositions), batchSize: 16 });
  return ev.prompt ? promptedEncoder(inner, ev.prompt) : inner;
}

/**
 * Evaluates the released checkpoints (every variant), or says why one cannot be evaluated here.
 * Under smoke the stand-ins of the file comment take their place.
 */
export async function evaluateReleased(entries: readonly ReleasedCheckpoint[], o: Table2Options): Promise<Table2Evaluation[]> {
  const out: Table2Evaluation[] = [];
  const log = o.log ?? (() => {});
  const smoke = isSmoke(o);
  // Smoke: one stand-in model serves every BERT entry; its batch-independent poolings share forward passes.
  let standIn: LoadedModel | undefined;
  let shared: ReturnType<typeof sharedPoolingEncoders> | undefined;
  try {
    for (const e of entries) {
      const variants = releasedVariants(e);
      const base = { kind: 'released' as const, entry: e, paperRows: e.paperRows };
      let m: LoadedModel | undefined;
      let standInNote: string | undefined;
      let ownModel = true;
      try {
        if (smoke && e.kind === 'bert') {
          standIn ??= await loadModel(o.model);
          shared ??= sharedPoolingEncoders(standIn, ['cls', 'cls_avg', 'cls_pooler', 'avg']);
          m = standIn;
          ownModel = false;
          standInNote = 'the golden tiny random BERT (smoke)';
        } else if (smoke && e.kind === 'sentence-transformers') {
          standIn ??= await loadModel(o.model);
          const dir = await saveSentenceTransformer(join(o.workDir, 'sbert-stand-in'), standIn, { pooling: 'avg', maxLength: 128, overwrite: true });
          m = await loadModel(dir);
          standInNote = 'the golden tiny random BERT saved as a sentence-transformers folder, mean pooling, max length 128 (smoke)';
        } else if (smoke && e.kind === 'lora-adapter') {
          const dir = o.adapterDirs?.[e.id];
          if (!dir) throw new UnavailableError(`needs the Hub and a converted adapter (smoke: the stand-in adapter serves one entry): ${e.preparation ?? ''}`);
          m = await loadReleasedModel({ ...e, baseModel: o.llmModel }, { workDir: o.workDir, adapterDir: dir });
          standInNote = "this notebook's adapter trained on the toy decoder (smoke)";
        } else {
          m = await loadReleasedModel(e, { workDir: o.workDir, hub: o.hub, adapterDir: o.adapterDirs?.[e.id] });
        }
      } catch (err) {
        if (!(err instanceof UnavailableError) && !(err instanceof InputError)) throw err;
        const why = err instanceof UnavailableError && !err.message.startsWith('needs ') ? `needs the Hub: ${describeError(err)}` : describeError(err);
        for (const v of variants) out.push({ ...base, label: `${e.id} (${v.label})`, variant: v.label, primary: v.primary, unavailable: why });
        log(`${e.id}: not evaluated here (${why})`);
        continue;
      }
      const lm = m;
      try {
        for (const v of variants) {
          const decoder = e.kind === 'lora-adapter';
          const pooling = v.pooling ? parsePooling(v.pooling) : undefined;
          let encoder: SentenceEncoder;
          if (decoder) encoder = promptEncoder(m, { pooling: v.pooling, maxLength: e.maxLength, prompt: e.prompt });
          else if (!ownModel && shared && pooling && shared.encoders.has(pooling) && v.sentevalBatchSize === undefined) encoder = shared.encoders.get(pooling)!;
          else encoder = new PooledSentenceEncoder(m, { ...(pooling ? { pooling } : {}), batchSize: Math.max(64, v.sentevalBatchSize ?? 0) });
          const settings = suiteSettings(v, decoder ? e.prompt : undefined);
          const costly = v.sentevalBatchSize !== undefined || !pooling;
          const suite = await evaluateOrExplain(() => runStsSuite({
            experiment: o.experiment,
            resultsDir: o.resultsDir,
            dataDir: o.dataDir,
            model: { ...portableModelIdentity(lm), weightsSha256: lm.weightsSha256 },
            encoder,
            settings,
            tasks: decoder ? o.decoderTasks : costly ? o.costlyTasks : undefined,
            pairsPerSet: decoder ? o.decoderPairsPerSet : undefined,
            mteb: { name: standInNote ? `${e.id} (stand-in)` : e.id, revision: lm.commit, embedDim: lm.model.hiddenSize, maxTokens: lm.model.maxPositions },
            configuration: { checkpoint: e.id, variant: v.label, ...(standInNote ? { standIn: standInNote } : {}) },
            paper: table2PaperCells(e.paperRows[0]),
            details: { table2: { kind: 'released', checkpoint: e.id, variant: v.label, primary: v.primary, standIn: standInNote ?? null, paperRows: e.paperRows } },
            force: o.force,
            log,
          }));
          const label = `${e.id} (${v.label})`;
          if (typeof suite === 'string') out.push({ ...base, label, variant: v.label, primary: v.primary, unavailable: suite });
          else out.push({ ...base, label, variant: v.label, primary: v.primary, run: suite.run, ...(standInNote ? { standIn: standInNote } : {}) });
        }
      } finally {
        if (ownModel) m.model.dispose();
      }
    }
  } finally {
    shared?.clear();
    standIn?.model.dispose();
  }
  return out;
}

/** The rows of the table the trained recipes fill. */
export function trainedPaperRows(r: TransferRecipe): Table2RowRef[] {
  switch (r.name) {
    case 'angle-nli-paper':
    case 'angle-nli-later':
      return [
        { file: '000_c0fdd0968b088fcd.txt', group: 'Supervised Models', row: 'AnglE-BERT' },
        { file: '001_06941bfad7bf7482.txt', group: 'Supervised Models', row: 'Angle-BERT' },
        { file: '003_ae373fbfc2de219d.txt', group: 'Supervised Models', row: 'Angle-BERT' },
      ];
    case 'simcse-nli-sup':
      return ['000_c0fdd0968b088fcd.txt', '001_06941bfad7bf7482.txt', '003_ae373fbfc2de219d.txt'].map((file) => ({ file, group: 'Supervised Models', row: 'SimCSE-BERT' }));
    case 'angle-llama-nli':
      return [
        { file: '000_c0fdd0968b088fcd.txt', group: 'Supervised Models', row: 'AnglE-LLaMA2-7B' },
        { file: '001_06941bfad7bf7482.txt', group: 'Supervised Models', row: 'Angle-LLaMA-2_7B' },
        { file: '003_ae373fbfc2de219d.txt', group: 'Supervised Models', row: 'Angle-LLaMA2-7B' },
      ];
    default:
      return [];
  }
}

/** Tokens the template takes with an empty text slot (AnglE's AngleDataTokenizer: the text gets the rest of max length). */
function templateTokens(m: LoadedModel, template: string): number {
  return m.tokenizer.encode(template.replace('{text}', '')).ids.length;
}

/**
 * Makes the table's data sets available: the seven STS sets (every evaluation) and, for training,
 * NLI (paper) or SICK (smoke's stand-in) with STS-B — from the data folder, the Hub cache, or the
 * Hub (downloaded into the cache). Returns what could not be had, by data set, instead of failing:
 * the evaluations and rows that need it say so.
 */
export async function prepareTable2Data(o: Pick<Table2Options, 'preset' | 'dataDir' | 'log'>): Promise<Map<DatasetId, string>> {
  const ids: DatasetId[] = [...STS_TASKS, nliSourceFor(o.preset) === 'nli' ? 'NLI' : 'SICKRelatedness'];
  const missing = new Map<DatasetId, string>();
  for (const id of [...new Set(ids)]) {
    try {
      await ensureDataset(id, { dataDir: o.dataDir, onProgress: o.log });
    } catch (e) {
      if (!(e instanceof InputError) && !(e instanceof UnavailableError)) throw e;
      missing.set(id, describeError(e));
    }
  }
  return missing;
}

/** The data of every view the recipes need, loaded once; a view that cannot load is its reason. */
export function loadTransferData(recipes: readonly TransferRecipe[], o: Pick<Table2Options, 'preset' | 'dataDir'>): Map<NliView, TaskData | string> {
  const source = nliSourceFor(o.preset);
  const out = new Map<NliView, TaskData | string>();
  for (const r of recipes) {
    if (out.has(r.view)) continue;
    try {
      out.set(r.view, nliTransferData(source, r.view, { dataDir: o.dataDir }));
    } catch (e) {
      if (!(e instanceof InputError) && !(e instanceof UnavailableError)) throw e;
      out.set(r.view, `data not on this machine: ${describeError(e)}`);
    }
  }
  return out;
}

/** Prompted task data for a LoRA recipe: texts cut to leave the template whole (AngleDataTokenizer), evaluation as the authors'. */
function promptedData(r: TransferRecipe, d: TaskData, m: LoadedModel): TaskData {
  const template = r.prompt?.template ?? ANGLE_LLAMA_TEMPLATE;
  const budget = r.config.maxLength - templateTokens(m, template);
  if (budget < 1) throw new InputError(`recipe ${r.name}: the prompt takes ${templateTokens(m, template)} tokens, max length ${r.config.maxLength} leaves no room for a text`);
  return promptedTaskData(d, { train: { template }, evaluate: r.evaluation.prompt ?? { template }, sentenceMaxTokens: budget, tokenizer: m.tokenizer });
}

/** Cost of each runnable recipe (two measured steps), or why it cannot run. */
export async function transferCostTable(recipes: readonly TransferRecipe[], seeds: readonly number[], data: Map<NliView, TaskData | string>, o: Table2Options): Promise<SimpleTable> {
  const rows: SimpleTable['rows'] = [];
  let total = 0;
  const limit = o.preset ? presetByName(o.preset).scale.trainExamples : undefined;
  for (const recipe of recipes) {
    const r = scaleTransferRecipe(recipe, o.preset, recipe.lora ? { ...o.overrides, ...o.decoderOverrides } : o.overrides);
    let d = data.get(r.view);
    if (r.lora && o.decoderEvalPairs !== undefined && typeof d === 'object') d = nliTransferData(nliSourceFor(o.preset), r.view, { dataDir: o.dataDir }, o.decoderEvalPairs);
    if (typeof d === 'string' || !d) {
      rows.push([r.name, '', '', '', d ?? 'no data']);
      continue;
    }
    let c: CostEstimate;
    if (r.lora) {
      const tok = await loadModel(o.llmModel);
      let pd: TaskData;
      try {
        pd = promptedData(r, d, tok);
      } finally {
        tok.model.dispose();
      }
      c = await estimateLoraCost(r, o.llmModel, pd, r.lora, limit);
    } else c = await estimateCost(r, o.model, d, limit);
    total += c.seconds * seeds.length;
    rows.push([r.name, c.steps, c.tokens, c.secondsPerStep.toFixed(3), `${(c.seconds * seeds.length).toFixed(0)} s for ${seeds.length} seed(s), plus the SentEval/MTEB evaluation`]);
  }
  return { caption: `Training cost on this backend: about ${(total / 60).toFixed(1)} min (finished runs are reused and cost nothing)`, columns: ['recipe', 'steps', 'tokens', 's / step', 'estimated'], rows };
}

/** Trains every recipe at every seed (reusing finished runs) and evaluates each run's selected weights on the suite. */
export async function trainTransferRows(recipes: readonly TransferRecipe[], seeds: readonly number[], data: Map<NliView, TaskData | string>, o: Table2Options): Promise<Table2Evaluation[]> {
  const out: Table2Evaluation[] = [];
  const log = o.log ?? (() => {});
  const smoke = isSmoke(o);
  const limit = o.preset ? presetByName(o.preset).scale.trainExamples : undefined;
  for (const recipe of recipes) {
    const r = scaleTransferRecipe(recipe, o.preset, recipe.lora ? { ...o.overrides, ...o.decoderOverrides } : o.overrides);
    const paperRows = trainedPaperRows(r);
    let d = data.get(r.view);
    if (r.lora && o.decoderEvalPairs !== undefined && typeof d === 'object') d = nliTransferData(nliSourceFor(o.preset), r.view, { dataDir: o.dataDir }, o.decoderEvalPairs);
    const base = { kind: 'trained' as const, recipe: r, variant: `${r.evaluation.pooling}${r.evaluation.prompt ? ', prompt' : ''}`, primary: true, paperRows };
    const standIn = smoke ? `${typeof d === 'object' ? d.train.name : 'SICK'}; ${r.lora ? 'the toy llama2.c decoder' : 'the golden tiny random BERT'} (smoke)` : undefined;
    for (const seed of seeds) {
      const label = `${r.name} (seed ${seed})`;
      if (typeof d !== 'object') {
        out.push({ ...base, label, seed, unavailable: d ?? 'no data' });
        continue;
      }
      const hooks = o.live?.(label);
      try {
        const common = {
          recipe: r,
          seed,
          trainExamples: limit,
          experiment: o.experiment,
          resultsDir: o.resultsDir,
          force: o.force,
          paper: table2PaperCells(paperRows[0]),
          details: { table2: { kind: 'trained', recipe: r.name, standIn: standIn ?? null } },
          onStep: hooks?.onStep?.bind(hooks),
          onEval: hooks?.onEval?.bind(hooks),
          log,
        };
        let training: RecipeRun;
        let evalModel: LoadedModel;
        let encoder: SentenceEncoder;
        let adapterDir: string | undefined;
        let evaluatedWeights: string;
        if (r.lora) {
          const tok = await loadModel(o.llmModel);
          let pd: TaskData;
          try {
            pd = promptedData(r, d, tok);
          } finally {
            tok.model.dispose();
          }
          training = await runLoraRecipe({ ...common, model: o.llmModel, data: pd, lora: r.lora, loraSeed: seed });
          adapterDir = await exportTrainedAdapter(join(o.resultsDir, o.experiment, 'runs', training.key), o.llmModel, r, seed);
          evalModel = await loadModel(o.llmModel);
          loadLoraAdapter(adapterDir, evalModel.model as AdaptableModel);
          encoder = promptEncoder(evalModel, r.evaluation);
          evaluatedWeights = createHash('sha256').update(`${evalModel.weightsSha256}\n`).update(readFileSync(join(adapterDir, 'adapter_model.safetensors'))).digest('hex');
        } else {
          training = await runRecipe({ ...common, model: o.model, data: d });
          evalModel = await loadModel(bestModelDir(join(o.resultsDir, o.experiment, 'runs', training.key)));
          encoder = new PooledSentenceEncoder(evalModel, { pooling: r.evaluation.pooling, batchSize: Math.max(64, r.evaluation.sentevalBatchSize ?? 0) });
          evaluatedWeights = evalModel.weightsSha256;
        }
        try {
          const trainRecord = training.run.record.data.find((x) => x.split === 'train');
          const suite = await evaluateOrExplain(() => runStsSuite({
            experiment: o.experiment,
            resultsDir: o.resultsDir,
            dataDir: o.dataDir,
            // The model a trained row started from (as its training record names it), so seeds of one recipe share it.
            model: { ...training.run.record.model, weightsSha256: training.run.record.model.weightsSha256 ?? '' },
            evaluatedWeightsSha256: evaluatedWeights,
            encoder,
            settings: suiteSettings(r.evaluation, r.evaluation.prompt ? { template: r.evaluation.prompt.template ?? ANGLE_LLAMA_TEMPLATE, prepareText: r.evaluation.prompt.prepareText } : undefined),
            tasks: r.lora ? o.decoderTasks : o.trainedTasks,
            pairsPerSet: r.lora ? o.decoderPairsPerSet : undefined,
            mteb: { name: `${r.name} seed ${seed} (trained here${standIn ? ', smoke' : ''})`, revision: training.key, embedDim: evalModel.model.hiddenSize, maxTokens: evalModel.model.maxPositions },
            seed,
            configuration: { recipe: r.name, ...(standIn ? { standIn } : {}) },
            trainData: trainRecord,
            paper: table2PaperCells(paperRows[0]),
            details: { table2: { kind: 'trained', recipe: r.name, trainingRun: training.run.record.runId, trainingKey: training.key, standIn: standIn ?? null, paperRows } },
            force: o.force,
            log,
          }));
          const done = { ...base, label, seed, training, ...(adapterDir ? { adapterDir } : {}), ...(standIn ? { standIn } : {}) };
          out.push(typeof suite === 'string' ? { ...done, unavailable: suite } : { ...done, run: suite.run });
        } finally {
          evalModel.model.dispose();
        }
      } finally {
        hooks?.close?.();
      }
    }
  }
  return out;
}

/**
 * The PEFT adapter directory (`<runDir>/adapter`) of a LoRA run's tested weights: fresh adapters
 * as the run made them, the best checkpoint's matrices loaded into them, saved in PEFT's layout.
 */
export async function exportTrainedAdapter(runDir: string, baseModel: string, r: TransferRecipe, seed: number): Promise<string> {
  const dir = join(runDir, 'adapter');
  // A finished run's adapter is written once (FORCE removes the run folder, adapter included).
  if (existsSync(join(dir, 'adapter_config.json')) && existsSync(join(dir, 'adapter_model.safetensors'))) return dir;
  const m = await loadModel(baseModel);
  try {
    addLora(m.model as AdaptableModel, r.lora!, seed);
    restoreBestWeights(bestModelDir(runDir), m.model.params);
    await saveLoraAdapter(dir, m.model as AdaptableModel, m.source === 'hub' ? { baseModel: m.id } : {});
  } finally {
    m.model.dispose();
  }
  return dir;
}

/**
 * The cells of one paper version's Table 2 that the evaluations fill (for lib/report's
 * sideBySide): per row the runs (seeds) of its primary evaluation, one cell per column with our
 * metric; a column an evaluation did not compute, or an evaluation that did not run, gets its reason.
 */
export function table2CellSources(evals: readonly Table2Evaluation[], file: string, opts: { kind?: 'released' | 'trained'; recipe?: string } = {}): CellSource[] {
  const chosen = evals.filter((e) => e.primary && (!opts.kind || e.kind === opts.kind) && (!opts.recipe || e.recipe?.name === opts.recipe));
  const byRow = new Map<string, { ref: Table2RowRef; evals: Table2Evaluation[] }>();
  for (const e of chosen) {
    const ref = e.paperRows.find((p) => p.file === file);
    if (!ref) continue;
    const k = `${ref.group}\u0000${ref.row}`;
    const g = byRow.get(k) ?? { ref, evals: [] };
    g.evals.push(e);
    byRow.set(k, g);
  }
  const cells: CellSource[] = [];
  for (const { ref, evals: es } of byRow.values()) {
    const ran = es.filter((e) => e.run);
    for (const { column, metric } of [...TABLE2_METRICS, TABLE2_AVERAGE]) {
      const have = ran.filter((e) => typeof e.run!.record.metrics[metric] === 'number');
      const cell: CellSource = { row: ref.row, group: ref.group, column, metric };
      if (have.length > 0) cell.runs = { runIds: have.map((e) => e.run!.record.runId) };
      else cell.reason = es.find((e) => e.unavailable)?.unavailable ?? (ran.length > 0 ? `not evaluated here (${metric === 'avg' ? 'needs all seven tasks' : 'task not run'})` : 'not run');
      cells.push(cell);
    }
  }
  return cells;
}

const f2 = (v: number | undefined) => (v === undefined || !Number.isFinite(v) ? '' : v.toFixed(2));

/** SentEval "all" beside the MTEB protocol, per evaluation (ρ × 100). */
export function sentevalMtebTable(evals: readonly Table2Evaluation[]): SimpleTable {
  const columns = ['evaluation', 'protocol', ...TABLE2_METRICS.map((m) => (m.metric === 'sickr' ? 'SICK-R' : m.column)), 'Avg.'];
  const rows: SimpleTable['rows'] = [];
  for (const e of evals.filter((x) => x.run)) {
    const m = e.run!.record.metrics;
    rows.push([e.label, 'SentEval', ...TABLE2_METRICS.map((c) => f2(m[c.metric])), f2(m.avg)]);
    if (TABLE2_METRICS.some((c) => m[`mteb_${c.metric}`] !== undefined)) rows.push([e.label, 'MTEB', ...TABLE2_METRICS.map((c) => f2(m[`mteb_${c.metric}`])), f2(m.mteb_avg)]);
  }
  return {
    caption: "SentEval (what the papers report) and the MTEB protocol on the same embeddings: Spearman's ρ × 100 of cosine",
    columns,
    rows,
    notes: [
      "SICK-R: SentEval scores its 4,927 test pairs; MTEB's test split (mteb/sickr-sts) is all of SICK, 9,927 pairs. STS12-16 and STS-B: the same pairs in both, one correlation over a year's subsets (SentEval's 'all').",
      "MTEB's texts are the original sentences; here both protocols read the data folder's SentEval copies (tokenised; STS12-16 lowercased), so cased or punctuation-sensitive models can differ from MTEB's own run.",
      'A batch-dependent pooling (cls_avg_legacy) is embedded in SentEval batches for SentEval and sentence by sentence in length-sorted batches for MTEB.',
    ],
  };
}

/**
 * The legacy-pooling comparison for a released checkpoint with both cls_avg variants: the paper's
 * row, the author's numbers with angle_emb 0.1.1 (issue #68), ours with each variant, and the
 * differences the variants make.
 */
export function legacyPoolingTable(evals: readonly Table2Evaluation[], entry: ReleasedCheckpoint): SimpleTable {
  const of = (pooling: string) => evals.find((e) => e.entry?.id === entry.id && e.run && e.run.record.config.pooling === pooling);
  const legacy = of('cls_avg_legacy');
  const masked = of('cls_avg');
  const paper = table2PaperCells(entry.paperRows[0]);
  const metrics = [...TABLE2_METRICS.map((m) => m.metric), 'avg'];
  const rows: SimpleTable['rows'] = [];
  rows.push([`paper (${entry.paperRows[0].file})`, ...metrics.map((k) => f2(paper[k]?.value))]);
  if (entry.reported) rows.push([entry.reported.source, ...entry.reported.values.map((v) => v.toFixed(2))]);
  if (legacy) rows.push([`ours: ${legacy.variant}${legacy.standIn ? ' [stand-in]' : ''}`, ...metrics.map((k) => f2(legacy.run!.record.metrics[k]))]);
  if (masked) rows.push([`ours: ${masked.variant}${masked.standIn ? ' [stand-in]' : ''}`, ...metrics.map((k) => f2(masked.run!.record.metrics[k]))]);
  if (legacy && masked) rows.push(['ours: legacy − masked', ...metrics.map((k) => f2((legacy.run!.record.metrics[k] ?? NaN) - (masked.run!.record.metrics[k] ?? NaN)))]);
  if (entry.reported) rows.push(['angle_emb 0.1.1 (issue #68) − paper', ...metrics.map((k, i) => (paper[k] ? (entry.reported!.values[i] - paper[k].value).toFixed(2) : ''))]);
  return { caption: `${entry.id}: cls_avg with and without padding in the mean`, columns: ['', ...TABLE2_METRICS.map((m) => m.column), 'Avg.'], rows };
}

/** A recipe's settings with their sources, its LoRA/prompt, its evaluation and what differs from the authors' run. */
export function transferRecipeTable(r: TransferRecipe): SimpleTable {
  const rows: SimpleTable['rows'] = [];
  const walk = (prefix: string, v: unknown) => {
    if (v && typeof v === 'object' && !Array.isArray(v)) for (const [k, x] of Object.entries(v)) walk(prefix ? `${prefix}.${k}` : k, x);
    else rows.push([prefix, Array.isArray(v) ? JSON.stringify(v) : String(v), '']);
  };
  walk('', r.config);
  const source = (k: string) => {
    for (let p = k; p; p = p.includes('.') ? p.slice(0, p.lastIndexOf('.')) : '') if (r.sources[p]) return r.sources[p];
    return '';
  };
  for (const row of rows) row[2] = source(String(row[0]));
  if (r.lora) rows.push(['lora', JSON.stringify(r.lora), r.sources.lora ?? '']);
  if (r.prompt) rows.push(['prompt', r.prompt.template, r.sources.prompt ?? '']);
  rows.push(['evaluation', JSON.stringify({ pooling: r.evaluation.pooling, ...(r.evaluation.prompt ? { prompt: r.evaluation.prompt } : {}), ...(r.evaluation.maxLength ? { maxLength: r.evaluation.maxLength } : {}) }), r.evaluation.source]);
  rows.push(['data view', r.view, r.view === 'pairs' ? 'AnglE: entailment 1, contradiction 0, neutral dropped (AnglE issue #26)' : "SimCSE's (anchor, entailed, contradicted) triplets"]);
  return { caption: `${r.name}: ${r.title}`, columns: ['setting', 'value', 'source'], rows, ...(r.deviations?.length ? { notes: r.deviations.map((d) => `differs from the authors' run: ${d}`) } : {}) };
}

/** The registry as a table: short cells, the full text of each as its hover title. */
export function releasedTable(entries: readonly ReleasedCheckpoint[]): SimpleTable {
  const firstClause = (t: string) => t.split('; ')[0];
  const rows: SimpleTable['rows'] = [];
  const titles: NonNullable<SimpleTable['titles']> = [];
  for (const e of entries) {
    const weights = e.kind === 'lora-adapter' ? `adapter on ${e.baseModel}` : e.weightsRevision ? `safetensors at ${e.weightsRevision}` : 'main';
    const loads = [weights, e.tokenizerFrom ? `tokenizer of ${e.tokenizerFrom}` : '', e.files.includes('adapter_model.bin') ? 'pickle: convert first' : ''].filter(Boolean).join('; ');
    const how = e.pooling ? `${e.pooling}${e.prompt ? ` of the prompt ${e.prompt.template}` : ''}` : "the folder's modules (mean, max length 128)";
    rows.push([e.id, `${e.files.length} files${e.files.some((f) => f.endsWith('.safetensors')) ? '' : ', no safetensors on main'}`, loads, how, firstClause(e.verified)]);
    titles.push([e.title, `${e.files.join(', ')} (${e.filesSeenAt})`, e.preparation ?? loads, e.evaluationSource, e.verified]);
  }
  return {
    caption: 'Released checkpoints of AnglE Table 2 (lib/models/released.ts; hover a cell for the full text)',
    columns: ['checkpoint', 'files', 'loads here from', 'evaluated with', 'verified from'],
    rows,
    titles,
    notes: [
      "Verified from stored copies of the Hub's pages (tree listings, file views), the AnglE repository's git history and SimCSE's README and evaluation.py: the Hub cannot be reached from the machine this was written on.",
    ],
  };
}

