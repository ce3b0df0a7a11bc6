/**
 * AnglE Table 2's released checkpoints, evaluated as their authors evaluated them (../models/released.ts):
 * each variant of each checkpoint through SentEval's STS suite with the MTEB protocol beside it
 * (./sts-suite-run.ts, one record each through the run store), and the tables a notebook shows of
 * them: the registry, the cells each evaluation fills (per paper version, for lib/report's
 * side-by-side tables), SentEval beside MTEB, and the legacy-pooling comparison. The trained rows
 * of the table are a plan (./plan.ts, ./tables/angle.ts).
 *
 * Where a checkpoint or the data cannot be had here, the evaluation says why (`unavailable`) and
 * the rest goes on. Under the smoke preset, stand-ins exercise every path: the golden tiny BERT for
 * each released BERT checkpoint (saved as a sentence-transformers folder with mean pooling for
 * SBERT) and the notebook's own trained adapter on the toy decoder for the released adapters; the
 * records say what stood in.
 */
import { join } from 'node:path';
import { ensureDataset } from '../data/ensure.js';
import { STS_TASKS, type DatasetId, type StsTaskName } from '../data/registry.js';
import { PooledSentenceEncoder, sharedPoolingEncoders } from '../embed/encoder.js';
import { parsePooling } from '../embed/pooling.js';
import { saveSentenceTransformer } from '../embed/sentence-transformer-export.js';
import type { SentenceEncoder } from '../embed/types.js';
import { loadModel } from '../models/auto.js';
import { loadReleasedModel } from '../models/load-released.js';
import type { ReleasedCheckpoint, Table2RowRef } from '../models/released.js';
import type { LoadedModel } from '../models/types.js';
import type { LoadedRun } from '../report/results-reader.js';
import type { PaperCell } from '../report/run-record.js';
import type { CellSource } from '../report/side-by-side.js';
import { portableModelIdentity } from '../report/training-record.js';
import { InputError, UnavailableError } from '../util/errors.js';
import type { SimpleTable } from '../util/table.js';
import { runStsSuite, TABLE2_AVERAGE, TABLE2_METRICS } from './sts-suite-run.js';
import { table2PaperCells } from './tables/angle.js';
import { promptEncoder, suiteSettings } from './trained-evaluation.js';
import { promptFor } from '../embed/prompt-encoder.js';
import { rehearseEncoding, stsSuiteTexts } from './rehearsal/encode.js';

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

/** One evaluation of a released checkpoint's variant. */
export interface Table2Evaluation {
  /** What the tables call it. */
  label: string;
  entry: ReleasedCheckpoint;
  variant: string;
  primary: boolean;
  paperRows: readonly Table2RowRef[];
  /** What stood in for the checkpoint (smoke). */
  standIn?: string;
  /** The suite record. */
  run?: LoadedRun;
  /** Why it did not run here. */
  unavailable?: string;
}

export interface Table2Options {
  experiment: string;
  resultsDir: string;
  dataDir?: string;
  /** 'smoke' evaluates the stand-ins (see the file comment); 'rehearsal' rehearses each variant's encoding instead of evaluating. */
  preset?: string;
  /** Under smoke, the stand-in of the released BERT checkpoints. */
  model: string;
  /** The decoder the released adapters belong on (smoke: the toy llama2.c model). */
  llmModel: string;
  /** Folders this assembles (released checkpoints' linked files, stand-in folders). */
  workDir: string;
  hub?: Parameters<typeof loadReleasedModel>[1]['hub'];
  /** Converted (safetensors) adapter folders by released adapter id. */
  adapterDirs?: Record<string, string>;
  /** SentEval tasks of the adapters' evaluations (default all seven; smoke: fewer, and the records say so). */
  decoderTasks?: readonly StsTaskName[];
  /** Adapters: the first N pairs of every evaluation set only (smoke; the records say so). */
  decoderPairsPerSet?: number;
  /** SentEval tasks of the evaluations that share no forward passes (SentEval-batched legacy pooling, sentence-transformers folders); default all seven. */
  costlyTasks?: readonly StsTaskName[];
  force?: boolean;
  log?: (line: string) => void;
}

/** A plan row's cells as the paper cells a record keeps, by metric. */
function paperByMetric(ref: Table2RowRef): Record<string, PaperCell> {
  return Object.fromEntries(table2PaperCells(ref).flatMap((c) => (c.paper ? [[c.metric!, c.paper]] : [])));
}

function isSmoke(o: Pick<Table2Options, 'preset'>): boolean {
  return o.preset === 'smoke';
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

/**
 * Evaluates the released checkpoints (every variant), or says why one cannot be evaluated here.
 * Under smoke the stand-ins of the file comment take their place.
 */
export async function evaluateReleased(entries: readonly ReleasedCheckpoint[], o: Table2Options): Promise<Table2Evaluation[]> {
  const out: Table2Evaluation[] = [];
  const log = o.log ?? (() => {});
  if (o.preset === 'rehearsal') {
    // The rehearsal preset (the caller's, as smoke is): each variant's SentEval suite rehearsed at its real shapes (lib/experiments/rehearsal/encode.ts).
    const texts = stsSuiteTexts(o.dataDir);
    for (const e of entries) {
      for (const v of releasedVariants(e)) {
        const prompted = e.prompt ? texts.map((t) => promptFor(t, e.prompt!)) : texts;
        const r = await rehearseEncoding({ notebook: o.experiment, run: `${e.id} (${v.label}): SentEval STS suite`, model: e.id, texts: prompted, batchSize: Math.max(16, v.sentevalBatchSize ?? 64), maxLength: e.maxLength, resultsDir: o.resultsDir });
        out.push({ entry: e, paperRows: e.paperRows, label: `${e.id} (${v.label})`, variant: v.label, primary: v.primary, unavailable: `rehearsed: ${r.status}${r.why ? ` (${r.why})` : ''} — see the rehearsal table` });
      }
    }
    return out;
  }
  const smoke = isSmoke(o);
  // Smoke: one stand-in model serves every BERT entry; its batch-independent poolings share forward passes.
  let standIn: LoadedModel | undefined;
  let shared: ReturnType<typeof sharedPoolingEncoders> | undefined;
  try {
    for (const e of entries) {
      const variants = releasedVariants(e);
      const base = { entry: e, paperRows: e.paperRows };
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
            paper: paperByMetric(e.paperRows[0]),
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

/**
 * Makes the table's evaluation data available: the seven STS sets, from the data folder, the Hub
 * cache, or the Hub (downloaded into the cache). Returns what could not be had, by data set,
 * instead of failing: the evaluations that need it say so.
 */
export async function prepareTable2Data(o: { dataDir?: string; log?: (line: string) => void }): Promise<Map<DatasetId, string>> {
  const missing = new Map<DatasetId, string>();
  for (const id of STS_TASKS) {
    try {
      await ensureDataset(id, { dataDir: o.dataDir, onProgress: o.log });
    } catch (e) {
      if (!(e instanceof InputError) && !(e instanceof UnavailableError)) throw e;
      missing.set(id, describeError(e));
    }
  }
  return missing;
}

/**
 * The cells of one paper version's Table 2 that the evaluations fill (for lib/report's
 * sideBySide): per row the runs (seeds) of its primary evaluation, one cell per column with our
 * metric; a column an evaluation did not compute, or an evaluation that did not run, gets its reason.
 */
export function table2CellSources(evals: readonly Table2Evaluation[], file: string): CellSource[] {
  const chosen = evals.filter((e) => e.primary);
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
export function sentevalMtebTable(evals: ReadonlyArray<{ label: string; run?: LoadedRun }>): SimpleTable {
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
  const paper = paperByMetric(entry.paperRows[0]);
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

