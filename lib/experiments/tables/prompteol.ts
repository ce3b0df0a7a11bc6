/**
 * PromptEOL (Jiang et al., "Scaling Sentence Embeddings with Large Language Models",
 * papers/002_684352d32195eadd.txt) as table rows and settings: the prompt's settings without
 * training (Tables 1 and 4), the in-context demonstrations chosen per OPT size (Table 4), and the
 * rows of Table 2 that contrastive fine-tuning with LoRA fills (../recipes/prompteol.ts is the
 * recipe). Facts of the reference code (kongds/scaling_sentemb at 656ddec): embeddings are
 * `hidden_states[-1][:, -1, :]` of the filled template with left padding, the sentence cleaned
 * first (`prepareText: 'prompteol'`, evaluation.py).
 */
import { PROMPTEOL_TEMPLATE, type Demonstration } from '../../embed/prompt-encoder.js';
import { SENTEVAL_STS_COLUMNS } from '../../eval/senteval-sts-evaluator.js';
import { paperCellOf } from '../paper-cell.js';
import type { PlanRow } from '../plan.js';
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

/**
 * PromptEOL Table 2's rows: the LLaMA 7B row fine-tuned from `model` and reported on the SentEval
 * STS suite (with the STS-B stand-in when NLI is not here and the plan allows stand-ins), the
 * others marked with what they need. `taskOptions` adds a smoke run's caps on the evaluation sets.
 */
export function prompteolTable2Rows(o: { model: string; model13b?: string; taskOptions?: TaskLoadOptions }): PlanRow[] {
  const cells = (row: string) =>
    SENTEVAL_STS_COLUMNS.map(({ column, metric }) => ({ column, metric: `test_${metric}`, paper: paperCellOf({ paper: 'prompteol', table: 2, row, column, file: PROMPTEOL_PAPER_FILE }) }));
  const needsOpt = 'needs OPT';
  return [
    ...['PromptEOL+CSE OPT 1.3B', 'PromptEOL+CSE OPT 2.7B', 'PromptEOL+CSE OPT 13B'].map((row) => ({ row, table: 'Table 2', cells: cells(row), unavailable: needsOpt })),
    {
      row: 'PromptEOL+CSE LLaMA 7B',
      table: 'Table 2',
      cells: cells('PromptEOL+CSE LLaMA 7B'),
      recipe: promptEolCse('nli'),
      standIn: promptEolCse('stsb-positives'),
      model: o.model,
      taskOptions: { ...o.taskOptions, test: 'senteval-sts' },
    },
    {
      row: 'PromptEOL+CSE LLaMA 13B',
      table: 'Table 2',
      cells: cells('PromptEOL+CSE LLaMA 13B'),
      recipe: promptEolCse13b(),
      standIn: promptEolCse('stsb-positives'),
      model: o.model13b ?? 'NousResearch/Llama-2-13b-hf',
      taskOptions: { ...o.taskOptions, test: 'senteval-sts' },
    },
  ];
}
