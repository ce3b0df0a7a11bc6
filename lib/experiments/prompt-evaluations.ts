/**
 * PromptEOL's evaluations without training (its Tables 1 and 4): one loaded decoder embeds every
 * sentence through the template — plainly, and after in-context demonstrations — and each row is
 * an evaluation record of the SentEval STS suite (./run-evaluation.ts: reused on a rerun). Beside
 * them, the improvement the demonstration brings next to Table 4's per OPT size.
 */
import { PromptSentenceEncoder, promptFor, type Demonstration } from '../embed/prompt-encoder.js';
import { rehearseEncoding, rehearsing, stsSuiteTexts } from './rehearsal/encode.js';
import type { Evaluator } from '../eval/evaluator.js';
import type { LoadedModel } from '../models/types.js';
import type { PaperTable } from '../paper/types.js';
import type { LoadedRun } from '../report/results-reader.js';
import type { SimpleTable } from '../util/table.js';
import { runEvaluation } from './run-evaluation.js';
import { PROMPTEOL_ICL_DEMONSTRATIONS, promptEolEncoderSettings } from './tables/prompteol.js';

export interface PromptRow {
  label: string;
  demonstrations: readonly Demonstration[];
}

/** The rows without training: the plain template, and the template after the demonstration. */
export function promptEolRows(modelName: string, demonstration: Demonstration): PromptRow[] {
  return [
    { label: `PromptEOL ${modelName}`, demonstrations: [] },
    { label: `PromptEOL+ICL ${modelName}`, demonstrations: [demonstration] },
  ];
}

/**
 * Evaluates (or reuses) each row on `evaluator` with the decoder, when it is loaded (none: no row
 * runs); under the rehearsal preset, rehearses each row's encoding of the SentEval STS suite at its
 * real shapes instead (./rehearsal/encode.ts). See the file comment.
 */
export async function evaluatePromptRows(
  decoder: { id: string; loaded?: LoadedModel },
  rows: readonly PromptRow[],
  o: { evaluator: Evaluator; experiment: string; resultsDir?: string; dataDir?: string; force?: boolean; log?: (line: string) => void; batchSize?: number; details?: Record<string, unknown> },
): Promise<Array<{ label: string; run: LoadedRun }>> {
  const out: Array<{ label: string; run: LoadedRun }> = [];
  if (rehearsing()) {
    const texts = stsSuiteTexts(o.dataDir);
    for (const row of rows) {
      const prompted = texts.map((t) => promptFor(t, { demonstrations: [...row.demonstrations], prepareText: 'prompteol' }));
      await rehearseEncoding({ notebook: o.experiment, run: `${row.label}: SentEval STS suite`, model: decoder.id, texts: prompted, batchSize: o.batchSize ?? 32, resultsDir: o.resultsDir });
    }
    return out;
  }
  const loaded = decoder.loaded;
  if (!loaded) return out;
  for (const row of rows) {
    const encoder = new PromptSentenceEncoder(loaded, { demonstrations: [...row.demonstrations], prepareText: 'prompteol', batchSize: o.batchSize ?? 32 });
    const r = await runEvaluation({
      label: row.label,
      model: loaded,
      encoder,
      config: promptEolEncoderSettings(row.demonstrations),
      evaluator: o.evaluator,
      experiment: o.experiment,
      resultsDir: o.resultsDir,
      force: o.force,
      log: o.log,
      paperNote: "PromptEOL's Tables 1 and 4 print OPT rows only; no LLaMA row without fine-tuning",
      details: { ...o.details, tableRow: row.label },
    });
    out.push({ label: row.label, run: r.run });
  }
  return out;
}

/**
 * The in-context demonstration's effect on the STS average: ours (plain vs ICL row) beside Table
 * 4's per OPT size (the paper prints no LLaMA row); OPT sizes this library cannot run say so.
 */
export function iclImprovementTable(o: { modelName: string; demonstration: Demonstration; plain?: number; icl?: number; table4: PaperTable; optSizesRun?: ReadonlyMap<string, number> }): SimpleTable {
  const t4 = o.table4.numbers.filter((n) => n.column === 'Improve');
  const ours = o.plain !== undefined && o.icl !== undefined ? [[o.modelName, o.demonstration.text, o.demonstration.word, (o.icl - o.plain).toFixed(2), `6.7B: ${t4.find((n) => n.row === '6.7B')?.printed ?? ''}`]] : [];
  return {
    caption: 'In-context learning: improvement of the STS average (Table 4 prints OPT sizes only)',
    columns: ['model', 'demonstration', 'word', 'improve (ours)', 'improve (paper, OPT of that size)'],
    rows: [
      ...ours,
      ...PROMPTEOL_ICL_DEMONSTRATIONS.map((d) => [`OPT ${d.size}`, d.demonstration.text, d.demonstration.word, o.optSizesRun?.has(d.size) ? o.optSizesRun.get(d.size)!.toFixed(2) : 'needs OPT', t4.find((n) => n.row === d.size)?.printed ?? '']),
    ],
  };
}
