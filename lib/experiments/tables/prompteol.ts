/**
 * PromptEOL (Jiang et al., "Scaling Sentence Embeddings with Large Language Models",
 * papers/002_684352d32195eadd.txt) as table rows and settings: the OPT sizes of its tables and the
 * Hub repositories they ran, the prompt's settings without training (Tables 1 and 4) and the
 * paper's numbers of those rows, the in-context demonstrations chosen per OPT size (Table 4), and
 * the rows of Table 2 that contrastive fine-tuning with LoRA fills (../recipes/prompteol.ts is the
 * recipe). Facts of the reference code (kongds/scaling_sentemb at 656ddec): embeddings are
 * `hidden_states[-1][:, -1, :]` of the filled template with left padding, the sentence cleaned
 * first (`prepareText: 'prompteol'`, evaluation.py).
 */
import { PROMPTEOL_TEMPLATE, type Demonstration } from '../../embed/prompt-encoder.js';
import { SENTEVAL_STS_COLUMNS } from '../../eval/senteval-sts-evaluator.js';
import { paperCellOf } from '../paper-cell.js';
import type { PlanCell, PlanRow } from '../plan.js';
import type { PromptEolModel } from '../prompt-embedding-route.js';
import { promptEolCse, promptEolCse13b } from '../recipes/prompteol.js';
import type { TaskLoadOptions } from '../tasks.js';

export const PROMPTEOL_PAPER_FILE = '002_684352d32195eadd.txt';
const CODE = 'kongds/scaling_sentemb@656ddec';

/**
 * The in-context demonstration chosen per OPT size on STS-B dev (PromptEOL Table 4; the sentences
 * as run_icl.sh has them — the text file cuts the 30B one and lost the 66B one).
 */
export const PROMPTEOL_ICL_DEMONSTRATIONS: ReadonlyArray<{ size: string; demonstration: Demonstration }> = [
  { size: '125M', demonstration: { text: 'A man is smoking.', word: 'Smoking' } },
  { size: '350M', demonstration: { text: 'A man is playing on a guitar and singing.', word: 'Music' } },
  { size: '1.3B', demonstration: { text: 'relating to switzerland or its people.', word: 'Swiss' } },
  { size: '2.7B', demonstration: { text: 'A jockey riding a horse.', word: 'Equestrian' } },
  { size: '6.7B', demonstration: { text: 'The man is riding a horse.', word: 'Horseback-riding' } },
  { size: '13B', demonstration: { text: 'meat from a deer.', word: 'Venison' } },
  { size: '30B', demonstration: { text: 'The man is riding a motorcycle down the road.', word: 'Motorcycling' } },
  { size: '66B', demonstration: { text: 'of or relating to tutors or tutoring.', word: 'Tutorial' } },
];

/** OPT's sizes as PromptEOL's tables print them, each with the Hub repository of that size. */
export const PROMPTEOL_OPT_SIZES: ReadonlyArray<{ size: string; model: string }> = [
  { size: '125M', model: 'facebook/opt-125m' },
  { size: '350M', model: 'facebook/opt-350m' },
  { size: '1.3B', model: 'facebook/opt-1.3b' },
  { size: '2.7B', model: 'facebook/opt-2.7b' },
  { size: '6.7B', model: 'facebook/opt-6.7b' },
  { size: '13B', model: 'facebook/opt-13b' },
  { size: '30B', model: 'facebook/opt-30b' },
  { size: '66B', model: 'facebook/opt-66b' },
];

/** The Hub repository of an OPT size ('1.3B' → facebook/opt-1.3b). */
export function optModelOf(size: string): string {
  const s = PROMPTEOL_OPT_SIZES.find((x) => x.size === size);
  if (!s) throw new Error(`no OPT size '${size}' in PromptEOL's tables (${PROMPTEOL_OPT_SIZES.map((x) => x.size).join(', ')})`);
  return s.model;
}

/** The demonstration Table 4 chose for an OPT size. */
export function optDemonstrationOf(size: string): Demonstration {
  const d = PROMPTEOL_ICL_DEMONSTRATIONS.find((x) => x.size === size);
  if (!d) throw new Error(`no Table 4 demonstration for OPT ${size}`);
  return d.demonstration;
}

/** The cells of a PromptEOL row over the SentEval STS suite (Tables 1 and 2), each with the paper's number. */
function stsCells(table: 1 | 2, row: string): PlanCell[] {
  return SENTEVAL_STS_COLUMNS.map(({ column, metric }) => ({ column, metric: `test_${metric}`, paper: paperCellOf({ paper: 'prompteol', table, row, column, file: PROMPTEOL_PAPER_FILE }) }));
}

/** One model of Tables 1 and 4: its rows (plain and with the demonstration) and the paper's numbers of each. */
export interface PromptEolTable1Model extends PromptEolModel {
  demonstration: Demonstration;
  /** Table 1's rows as printed ('PromptEOL OPT 125M', 'PromptEOL+ICL OPT 125M'), or our labels for an off-table model. */
  rows: Array<{ label: string; demonstrations: Demonstration[]; cells: PlanCell[] }>;
}

/**
 * Tables 1 and 4's models: every OPT size with its Table 4 demonstration and Table 1's numbers,
 * then, with `llama`, the notebook's LLaMA decoder (off the table: the paper prints no LLaMA row
 * without fine-tuning) with the demonstration it is given.
 */
export function prompteolTable1Models(o: { llama?: { model: string; name: string; demonstration: Demonstration } } = {}): PromptEolTable1Model[] {
  const opt = PROMPTEOL_OPT_SIZES.map(({ size, model }) => {
    const demonstration = optDemonstrationOf(size);
    return {
      size,
      model,
      opt: true,
      demonstration,
      rows: [
        { label: `PromptEOL OPT ${size}`, demonstrations: [], cells: stsCells(1, `PromptEOL OPT ${size}`) },
        { label: `PromptEOL+ICL OPT ${size}`, demonstrations: [demonstration], cells: stsCells(1, `PromptEOL+ICL OPT ${size}`) },
      ],
    };
  });
  if (!o.llama) return opt;
  const { model, name, demonstration } = o.llama;
  return [
    ...opt,
    {
      size: name,
      model,
      opt: false,
      demonstration,
      rows: [
        { label: `PromptEOL ${name}`, demonstrations: [], cells: [] },
        { label: `PromptEOL+ICL ${name}`, demonstrations: [demonstration], cells: [] },
      ],
    },
  ];
}

/** How PromptEOL embeds a sentence without training (the settings a record keeps). */
export function promptEolEncoderSettings(demonstrations: readonly Demonstration[] = []): { template: string; demonstrations: Demonstration[]; prepareText: 'prompteol'; pooling: 'last token of the prompt'; source: string } {
  return {
    template: PROMPTEOL_TEMPLATE,
    demonstrations: [...demonstrations],
    prepareText: 'prompteol',
    pooling: 'last token of the prompt',
    source: `PromptEOL §3.1 template; ${CODE} evaluation.py (sentence clean-up, hidden_states[-1][:, -1], left padding)${demonstrations.length ? '; demonstration: run_icl.sh / Table 4' : ''}`,
  };
}

/** The OPT sizes of Table 2 (PromptEOL+CSE), as printed. */
export const PROMPTEOL_TABLE2_OPT_SIZES = ['1.3B', '2.7B', '13B'] as const;

/**
 * PromptEOL Table 2's rows, each fine-tuned with PromptEOL+CSE and reported on the SentEval STS
 * suite (with the STS-B stand-in when NLI is not here and the plan allows stand-ins): the OPT rows
 * from `facebook/opt-<size>` (13B as two micro-batches of 100, as LLaMA 13B: ../recipes/prompteol.ts),
 * the LLaMA 7B row from `model`, the LLaMA 13B row from `model13b`. With `optStandIn` (the smoke
 * preset's tiny OPT) the first OPT row trains from it instead, and the other OPT rows say that it
 * stood in once; so does the LLaMA 13B row unless `model13b` is named (under smoke `model` is the
 * toy decoder, which stands in for LLaMA 7B only). `taskOptions` adds a smoke run's caps on the
 * evaluation sets.
 */
export function prompteolTable2Rows(o: { model: string; model13b?: string; optStandIn?: string; taskOptions?: TaskLoadOptions }): PlanRow[] {
  const cells = (row: string) => stsCells(2, row);
  const taskOptions: TaskLoadOptions = { ...o.taskOptions, test: 'senteval-sts' };
  const [first] = PROMPTEOL_TABLE2_OPT_SIZES;
  const optRows: PlanRow[] = PROMPTEOL_TABLE2_OPT_SIZES.map((size) => {
    const row = `PromptEOL+CSE OPT ${size}`;
    if (o.optStandIn !== undefined && size !== first) {
      return { row, table: 'Table 2', cells: cells(row), unavailable: `smoke: the tiny OPT stood in once, for OPT ${first} (not repeated per size)` };
    }
    return {
      row,
      table: 'Table 2',
      cells: cells(row),
      recipe: size === '13B' ? promptEolCse13b() : promptEolCse('nli'),
      standIn: promptEolCse('stsb-positives'),
      model: o.optStandIn ?? optModelOf(size),
      taskOptions,
    };
  });
  const row13b = 'PromptEOL+CSE LLaMA 13B';
  const llama13b: PlanRow =
    o.optStandIn !== undefined && o.model13b === undefined
      ? { row: row13b, table: 'Table 2', cells: cells(row13b), unavailable: 'smoke: the toy decoder stood in once, for LLaMA 7B (not repeated per size)' }
      : {
          row: row13b,
          table: 'Table 2',
          cells: cells(row13b),
          recipe: promptEolCse13b(),
          standIn: promptEolCse('stsb-positives'),
          model: o.model13b ?? 'NousResearch/Llama-2-13b-hf',
          taskOptions,
        };
  return [
    ...optRows,
    {
      row: 'PromptEOL+CSE LLaMA 7B',
      table: 'Table 2',
      cells: cells('PromptEOL+CSE LLaMA 7B'),
      recipe: promptEolCse('nli'),
      standIn: promptEolCse('stsb-positives'),
      model: o.model,
      taskOptions,
    },
    llama13b,
  ];
}
