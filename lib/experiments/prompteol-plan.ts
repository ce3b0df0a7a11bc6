/**
 * Notebook 09's one plan (PromptEOL Tables 1–4, Figure 3): its rows, the smoke preset's shortcuts,
 * and what the notebook says of the outcome.
 *
 * - Rows, in the order they run: Table 1's rows without training, one per model of Tables 1 and 4
 *   and prompt (plain, after the demonstration), each an evaluation row (./prompt-evaluation-rows.ts)
 *   embedded where the model's route sends it (the notebook's LLaMA decoder beside them, off the
 *   table); each OPT model's demonstration search on STS-B dev (Figure 3 is OPT only; its records go
 *   to their own results folder); then Table 2's rows, trained with PromptEOL+CSE (LoRA).
 * - The smoke preset, decided here from the plan's preset and nowhere else in the notebook: the
 *   golden tiny random OPT stands in once for the OPT rows, the toy decoder for LLaMA, SentEval's
 *   sets are cut to their first pairs and STS-B dev to its first pairs, and the LoRA rows run a
 *   few steps of small batches (`PROMPTEOL_SMOKE`).
 */
import type { Demonstration } from '../embed/prompt-encoder.js';
import { sentevalStsEvaluator } from '../eval/senteval-sts-evaluator.js';
import { readDemonstrationFile, type DemonstrationCandidate } from '../llm/demonstration-set.js';
import { endpointFromEnv } from '../llm/endpoint-from-env.js';
import type { PaperTable } from '../paper/types.js';
import { oursValue, type CellSource, type SideBySide } from '../report/side-by-side.js';
import type { SimpleTable } from '../util/table.js';
import { labelStsbTrainDemonstrations, oneWordLabelsTable, PROMPTEOL_DEMONSTRATION_SET_SIZE, table4DemonstrationSet } from './icl-demonstration-sets.js';
import type { Plan, PlanRow } from './plan.js';
import { promptEmbeddingRoutes, smokeOptStandIn, type EndpointSetting } from './prompt-embedding-route.js';
import { IclSearchEvaluation, promptEolTable1Rows, type RoutedPromptModel } from './prompt-evaluation-rows.js';
import { iclImprovementTable, optIclImprovements, type PromptModelResult } from './prompt-evaluations.js';
import type { TableOverrides } from './row-overrides.js';
import { prompteolTable1Models, prompteolTable2Rows } from './tables/prompteol.js';

/**
 * The smoke preset's shortcuts: SentEval's first pairs of each set, STS-B dev's first pairs (the
 * fine-tuning selects on them and the search evaluates them), and few steps of small batches for
 * the LoRA rows (a decoder's step is slow on a CPU).
 */
export const PROMPTEOL_SMOKE = {
  pairsPerSet: 8,
  devPairs: 50,
  overrides: { maxSteps: 4, evalEvery: 2, batchSize: 8 },
} as const;

export interface PromptEolPlanOptions {
  /** The notebook's decoder (LLM_MODEL): the LLaMA rows' model. */
  model: string;
  /** The LLaMA rows' demonstration (the paper prints none for LLaMA). */
  demonstration: Demonstration;
  /** The plan's preset: 'smoke' takes the shortcuts above. */
  preset?: string;
  dataDir?: string;
  /** OpenAI-compatible /v1/embeddings endpoint(s) (./prompt-embedding-route.ts). */
  endpoints?: EndpointSetting;
  /** Models sent to the endpoint although one GPU holds them. */
  endpointModels?: readonly string[];
  /** The demonstration search's candidates (default: Table 4's demonstrations). */
  candidates?: readonly DemonstrationCandidate[];
  /** The results folder of the search's records (hundreds of them, apart from the tables'). */
  searchExperiment: string;
}

/** What the name of a decoder is in row labels: the last part of its id or folder. */
export function decoderName(model: string): string {
  return model.split('/').pop()!;
}

/** Each model of Tables 1 and 4 (the notebook's decoder as the LLaMA one) with where it is embedded. */
export function prompteolRoutedModels(o: Omit<PromptEolPlanOptions, 'searchExperiment' | 'candidates' | 'dataDir'>): RoutedPromptModel[] {
  const smoke = o.preset === 'smoke';
  return promptEmbeddingRoutes(prompteolTable1Models({ llama: { model: o.model, name: decoderName(o.model), demonstration: o.demonstration } }), {
    endpoints: o.endpoints,
    endpointModels: o.endpointModels,
    standIn: smoke ? smokeOptStandIn() : undefined,
  });
}

/** Notebook 09's rows (see the file comment). */
export function prompteolPlanRows(o: PromptEolPlanOptions): PlanRow[] {
  const smoke = o.preset === 'smoke';
  const pairsPerSet = smoke ? PROMPTEOL_SMOKE.pairsPerSet : undefined;
  const devPairs = smoke ? PROMPTEOL_SMOKE.devPairs : undefined;
  const evaluator = sentevalStsEvaluator({ dataDir: o.dataDir, pairsPerSet });
  const models = prompteolRoutedModels(o);
  const table1 = promptEolTable1Rows(models, evaluator);
  const candidates = o.candidates ?? table4DemonstrationSet();
  const searches: PlanRow[] = models
    .filter((m) => m.opt)
    .map((m) => {
      const evaluation = new IclSearchEvaluation(m, candidates, { experiment: o.searchExperiment, pairs: devPairs, rehearsalCandidates: PROMPTEOL_DEMONSTRATION_SET_SIZE });
      return { row: `${evaluation.label}: demonstration search`, table: 'Figure 3', cells: [], offTable: true, evaluation };
    });
  const optStandIn = smoke ? smokeOptStandIn() : undefined;
  return [...table1, ...searches, ...prompteolTable2Rows({ model: o.model, optStandIn, taskOptions: { evalPairs: devPairs, testPairsPerSet: pairsPerSet } })];
}

/** The parameter cell's overrides over the preset's (smoke: few steps of small batches); the cell's win. */
export function prompteolOverrides(preset: string | undefined, overrides: TableOverrides = {}): TableOverrides {
  return { ...(preset === 'smoke' ? PROMPTEOL_SMOKE.overrides : {}), ...overrides };
}

/**
 * The demonstration search's candidates: a file of them (`file`: JSON lines or the authors'
 * icl_examples.txt), else Table 4's; with `labelWithEndpoint`, also 100 STS-B train sentences
 * labelled with one word through OPENAI_BASE_URL / OPENAI_API_KEY (answers cached under `out`).
 * `tables`: what the labelling shows.
 */
export async function prompteolDemonstrationCandidates(o: { file?: string; labelWithEndpoint?: boolean; dataDir?: string; out: string; log?: (line: string) => void }): Promise<{ candidates: DemonstrationCandidate[]; tables: SimpleTable[] }> {
  const candidates = o.file ? readDemonstrationFile(o.file) : table4DemonstrationSet();
  if (!o.labelWithEndpoint) return { candidates, tables: [] };
  const endpoint = endpointFromEnv({ defaultModel: 'gpt-3.5-turbo' });
  if (!endpoint.generator) {
    o.log?.(`one-word labels: ${endpoint.why}`);
    return { candidates, tables: [] };
  }
  const labelled = await labelStsbTrainDemonstrations(endpoint.generator, { dataDir: o.dataDir, count: 100, out: `${o.out}/stsb-train-one-word.jsonl`, cacheDir: `${o.out}/llm-cache`, log: o.log });
  return { candidates: [...candidates, ...labelled.candidates], tables: [oneWordLabelsTable(labelled.labelling)] };
}

/** The notebook's decoder's plain and ICL averages, when they ran (the LLaMA model of the results). */
function llamaAverages(results: readonly PromptModelResult[]): { name: string; demonstration?: Demonstration; plain?: number; icl?: number } {
  const llama = results.find((m) => !m.opt);
  const avg = (icl: boolean) => {
    const row = llama?.rows.find((r) => (r.demonstrations.length > 0) === icl);
    return llama?.runs.find((x) => x.label === row?.label)?.run.record.metrics.test_avg;
  };
  return { name: llama?.size ?? '', demonstration: llama?.demonstration, plain: avg(false), icl: avg(true) };
}

/** The in-context demonstration's effect, ours beside Table 4's (./prompt-evaluations.ts `iclImprovementTable`), from the plan's results. */
export function prompteolIclTable(results: readonly PromptModelResult[], table4: PaperTable): SimpleTable {
  const l = llamaAverages(results);
  const opt = optIclImprovements(results);
  return iclImprovementTable({ modelName: l.name, demonstration: l.demonstration ?? { text: '', word: '' }, plain: l.plain, icl: l.icl, table4, optSizesRun: opt.improvements, optNotes: opt.notes });
}

/** The captions of notebook 09's tables, with the smoke preset's caveats. */
export function prompteolCaptions(preset: string | undefined, model: string): { table1: string; side1: string; search: string; side2: (plan: Plan) => string } {
  const smoke = preset === 'smoke';
  const name = decoderName(model);
  const llamaRow = (plan: Plan) => plan.rows.find((r) => r.recipe && r.model === model);
  return {
    table1: `Ours without fine-tuning (SentEval STS, ρ × 100)${smoke ? ` — smoke: the first ${PROMPTEOL_SMOKE.pairsPerSet} pairs of each set; OPT 125M is the tiny random OPT standing in, ${name} the toy decoder` : ''}`,
    side1: `PromptEOL Table 1 (Avg.) — ours without fine-tuning${smoke ? ' (smoke: the tiny random OPT stands in for OPT 125M; its numbers mean nothing)' : ''}`,
    search: `Demonstration search on STS-B dev (ρ × 100)${smoke ? ` — smoke: the first ${PROMPTEOL_SMOKE.devPairs} pairs; the tiny random OPT stands in for OPT 125M` : ''}`,
    side2: (plan) => {
      const row = llamaRow(plan);
      return `PromptEOL Table 2 — ours: ${smoke ? `${name} standing in for LLaMA 7B, the tiny random OPT for OPT 1.3B` : `${name}, facebook/opt-*`}, trained on ${row && plan.standInOf(row) ? 'the STS-B stand-in' : 'NLI'}`;
    },
  };
}

/** Table 3's PromptEOL cells (transfer tasks): not run here, with where they are run. */
export function prompteolTable3Sources(table3: PaperTable): CellSource[] {
  return table3.numbers
    .filter((n) => n.row.startsWith('PromptEOL') && n.column === 'Avg.')
    .map((n) => ({ row: n.row, column: n.column, reason: "not run here (07-senteval-transfer's protocol with this encoder, on a GPU host)" }));
}

/** The verdict: what in-context learning and contrastive fine-tuning changed, ours beside the paper's, one line each. */
export function prompteolVerdict(plan: Plan, results: readonly PromptModelResult[], o: { table4: PaperTable; side2: SideBySide; preset?: string }): string {
  const l = llamaAverages(results);
  const opt = optIclImprovements(results);
  const optRan = results.filter((m) => m.opt && m.runs.length === m.rows.length);
  const optNotRun = results.filter((m) => m.opt && m.runs.length < m.rows.length);
  // The untrained average of the notebook's decoder compares with the rows fine-tuned from that decoder only.
  const own = new Set(plan.rows.filter((r) => r.recipe && plan.modelOf(r) === plan.o.model).map((r) => r.row));
  const lines = [
    l.plain !== undefined && l.icl !== undefined ? `In-context learning changes ${l.name}'s STS average by ${(l.icl - l.plain).toFixed(2)} points (the paper: +0.46 to +9.35 on OPT).` : `No evaluation of ${l.name} without training ran here.`,
    ...optRan.map((m) => {
      const d = opt.improvements.get(m.size);
      const paper = o.table4.numbers.find((n) => n.column === 'Improve' && n.row === m.size)?.printed ?? '';
      return `OPT ${m.size}${m.route.kind === 'in-process' && m.route.standInFor ? ' (the tiny random OPT standing in)' : ''}: in-context learning ${d !== undefined ? `${d >= 0 ? '+' : ''}${d.toFixed(2)}` : '?'} points (the paper: +${paper}).`;
    }),
    optNotRun.length ? `OPT sizes not run here: ${optNotRun.map((m) => m.size).join(', ')} (the routes table says why).` : '',
    ...o.side2.cells
      .filter((c) => c.ours && c.column === 'Avg.')
      .map((c) => {
        const fine = oursValue(c.ours!);
        return `Contrastive fine-tuning, ${c.row}: average ${fine.toFixed(2)} (paper ${c.paperText}${l.plain !== undefined && own.has(c.row) ? `; ${fine > l.plain ? 'above' : 'not above'} our untrained ${l.plain.toFixed(2)}` : ''}).`;
      }),
    o.preset === 'smoke' ? 'Smoke preset: stand-in models, tiny data and few steps — these numbers check the code path, not the paper.' : '',
  ];
  return lines.filter(Boolean).join('\n');
}

/** The summary file's text: preset, decoder, backend, seeds, fine-tuning data, and which OPT rows ran. */
export function prompteolSummaryText(plan: Plan, results: readonly PromptModelResult[], o: { backend: string }): string {
  const optRan = results.filter((m) => m.opt && m.runs.length === m.rows.length);
  const optNotRun = results.filter((m) => m.opt && m.runs.length < m.rows.length);
  const stoodIn = results.some((m) => m.route.kind === 'in-process' && m.route.standInFor);
  return `Preset ${plan.o.preset ?? '(none)'}, decoder ${plan.o.model}, backend ${o.backend}, seeds ${plan.o.seeds.join(', ')}. Fine-tuning data: ${plan.dataNotes().join('; ') || "SimCSE's NLI triplets (the paper's data)"}. OPT rows without training: ${optRan.map((m) => m.size).join(', ') || 'none'} ran${stoodIn ? ' (smoke: the tiny random OPT stood in)' : ''}${optNotRun.length ? `; not run: ${optNotRun.map((m) => m.size).join(', ')}` : ''}.`;
}
