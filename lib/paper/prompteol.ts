/**
 * Scaling Sentence Embeddings with Large Language Models (Jiang et al.; PromptEOL), Tables 1–4,
 * transcribed by hand from `papers/002_684352d32195eadd.txt` (a Mathpix extraction: markdown
 * tables with LaTeX in the cells).
 *
 * Rows are named "<method> <params>" because the method cell spans several model sizes
 * ("PromptEOL OPT 125M", "SimCSE-BERT 110M"). Where the extraction misplaced or lost a method
 * label (Table 2 from its third row, Table 3's supervised block, Table 4's size column) the label
 * is reconstructed and the row's note gives the evidence; the numbers themselves are on the
 * lines they are printed on (checked by test/paper.test.ts).
 */
import { defineTable, group, type PaperTable } from './types.js';

export const PROMPTEOL_FILE = '002_684352d32195eadd.txt';
const F = PROMPTEOL_FILE;

const STS_COLUMNS = ['STS12', 'STS13', 'STS14', 'STS15', 'STS16', 'STS-B', 'SICK-R', 'Avg.'];
const TRANSFER_COLUMNS = ['MR', 'CR', 'SUBJ', 'MPQA', 'SST', 'TREC', 'MRPC', 'Avg.'];
const PARAMS_NOTE = "Rows are named '<method> <params>' (the Params column is part of the row name).";

const T1 = defineTable({
  paper: 'prompteol',
  file: F,
  table: 'Table 1',
  caption:
    'Performances of our method on STS tasks without fine-tuning. ICL denotes in-context learning with our demonstration set. †: results from [GYC21]. ‡: results from [JJH+22]. §: results from [NÁC+21].',
  quantity: "Spearman's ρ × 100 (SentEval STS)",
  notes: [
    PARAMS_NOTE,
    'Avg. is the mean of the seven STS columns.',
    "PromptEOL OPT 350M: the Avg. cell is an image in the text file; the mean of the row's seven numbers is 65.03, which agrees with Table 4's improvement 3.99 = 69.02 − 65.03.",
  ],
  columns: STS_COLUMNS,
  rows: [
    group('Fine-tuning on unsupervised datasets'),
    ['SimCSE-BERT 110M †', '68.40 82.41 74.38 80.91 78.56 76.85 72.23 76.25'],
    ['SimCSE-RoBERTa 123M †', '70.16 81.77 73.24 81.36 80.65 80.22 68.56 76.57'],
    ['PromptBERT 110M ‡', '71.56 84.58 76.98 84.47 80.60 81.60 69.87 78.54'],
    ['PromptRoBERTa 123M ‡', '73.94 84.74 77.28 84.99 81.74 81.88 69.50 79.15'],
    group('Without fine-tuning'),
    ['BERT avg. 110M †', '30.87 59.89 47.73 60.29 63.73 47.29 58.22 52.57'],
    ['BERT prompt 110M ‡', '60.96 73.83 62.18 71.54 68.68 70.60 67.16 67.85'],
    ['ST5-Enc 4.8B §', '34.97 60.19 47.59 66.40 70.62 62.83 63.57 58.02'],
    ['PromptEOL OPT 125M', '59.90 71.55 60.93 70.76 72.83 67.89 65.14 67.00'],
    ['PromptEOL OPT 350M', '54.70 71.52 59.99 64.51 71.39 66.55 66.58 _', 'Avg. cell is an image in the text file.'],
    ['PromptEOL OPT 1.3B', '64.59 79.06 68.46 78.88 78.64 73.22 69.41 73.18'],
    ['PromptEOL OPT 2.7B', '60.03 75.51 64.30 74.56 77.62 67.73 65.35 69.30'],
    ['PromptEOL OPT 6.7B', '60.91 80.05 67.65 75.49 80.11 72.91 67.57 72.10'],
    ['PromptEOL OPT 13B', '60.21 81.36 69.69 75.46 79.58 70.73 65.99 71.86'],
    ['PromptEOL OPT 30B', '59.99 80.52 69.80 75.20 78.03 73.57 69.87 72.43'],
    ['PromptEOL OPT 66B', '55.66 74.62 64.90 72.34 75.21 71.72 67.43 68.84'],
    ['PromptEOL+ICL OPT 125M', '62.22 73.10 61.84 71.09 72.08 67.80 64.10 67.46'],
    ['PromptEOL+ICL OPT 350M', '63.87 73.85 63.41 72.45 73.13 70.84 65.61 69.02'],
    ['PromptEOL+ICL OPT 1.3B', '72.78 83.77 73.61 83.42 80.60 78.80 69.69 77.52'],
    ['PromptEOL+ICL OPT 2.7B', '68.49 84.72 75.15 83.62 81.34 80.94 72.97 78.18'],
    ['PromptEOL+ICL OPT 6.7B', '70.65 84.51 75.01 83.51 82.00 81.12 76.77 79.08'],
    ['PromptEOL+ICL OPT 13B', '71.99 85.22 76.04 82.23 81.38 81.42 75.00 79.04'],
    ['PromptEOL+ICL OPT 30B', '69.99 83.35 74.75 83.14 82.42 81.45 77.46 78.94'],
    ['PromptEOL+ICL OPT 66B', '69.93 83.29 74.88 80.10 81.11 81.76 76.26 78.19'],
  ],
});

const T2_SHIFT =
  "Label reconstructed: the text file prints the labels of PromptRoBERTa, SGPT and ST5-Enc one line above their numbers (the 'SimCSE-RoBERTa' cell spans two rows), so lines 3–6 of the block read 'PromptRoBERTa', 'SGPT', 'ST5-Enc' and nothing; the Params cells are on the right lines.";

const T2 = defineTable({
  paper: 'prompteol',
  file: F,
  table: 'Table 2',
  caption:
    'Performances of our method on STS tasks with fine-tuning. CSE denotes contrastive learning for sentence embeddings. †: results from [GYC21]. §: results from [NÁC+21]. 『: results from evaluation the public checkpoint [Mue22] on STS tasks.',
  quantity: "Spearman's ρ × 100 (SentEval STS)",
  notes: [
    PARAMS_NOTE,
    'Avg. is the mean of the seven STS columns.',
    T2_SHIFT +
      " Evidence: the text says ST5-Enc has 4.8B parameters (also Table 3's ST5-Enc 4.8B) and PromptRoBERTa is 123M in Table 1; printed here as 'ST5-Enc § 5.8B' and 'SGPT 『 123.' one line up.",
    "SGPT's marker is printed in the table as a bold superscript q; the caption prints it as 『 (both extractions of one symbol, probably ¶).",
    "'SBERT-NL' and the params '1254M' are as printed (garbled in the extraction).",
    "The PromptEOL+CSE OPT rows are 1.3B, 2.7B, 13B as printed (the text file has no 6.7B row in this table).",
  ],
  columns: STS_COLUMNS,
  rows: [
    group('Fine-tuning on supervised datasets'),
    ['SBERT-NL 220M †', '72.27 78.46 74.90 80.99 76.25 79.23 73.75 76.55'],
    ['SimCSE-RoBERTa 123M †', '76.53 85.21 80.95 86.03 82.57 85.83 80.50 82.52'],
    ['SimCSE-RoBERTa 1254M †', '77.46 87.27 82.36 86.66 83.93 86.70 81.95 83.76', `${T2_SHIFT} The text prints 'PromptRoBERTa ‡' on this line.`],
    ['PromptRoBERTa 123M ‡', '76.75 85.93 82.28 86.69 82.80 86.14 80.04 82.95', `${T2_SHIFT} The text prints 'SGPT' with params '123.' on this line.`],
    ['SGPT 5.8B 『', '74.28 85.35 79.21 85.52 82.54 85.50 79.53 81.70', `${T2_SHIFT} The text prints 'ST5-Enc §' on this line.`],
    ['ST5-Enc 4.8B §', '80.10 88.75 84.70 88.86 85.17 86.77 80.39 84.96', `${T2_SHIFT} The text prints no method on this line.`],
    ['PromptEOL+CSE OPT 1.3B', '79.01 89.26 84.10 88.30 84.62 87.71 80.52 84.79'],
    ['PromptEOL+CSE OPT 2.7B', '79.49 89.64 84.80 89.51 85.91 88.33 81.64 85.62'],
    ['PromptEOL+CSE OPT 13B', '80.14 90.02 84.94 89.78 85.84 88.75 81.29 85.82'],
    ['PromptEOL+CSE LLaMA 7B', '79.16 90.22 85.40 88.99 86.25 88.37 81.51 85.70'],
    ['PromptEOL+CSE LLaMA 13B', '78.63 90.03 85.46 89.48 86.18 88.45 82.69 85.85'],
  ],
});

const T3 = defineTable({
  paper: 'prompteol',
  file: F,
  table: 'Table 3',
  caption:
    'Performances of our method on transfer learning tasks. †: results from [GYC21]. ‡: results from [JJH+22]. §: results from [NÁC+21].',
  quantity: 'accuracy (%) of SentEval transfer tasks',
  notes: [
    PARAMS_NOTE,
    'Avg. is the mean of the seven task columns.',
    "Supervised block: the second row's method cell is blank (continuation of SimCSE-RoBERTa); the third row's label is an image in the text file and the fourth's is blank — reconstructed as PromptRoBERTa 123M and ST5-Enc 4.8B, the order of Table 2's supervised block.",
    "'BERT avg.' and 'ST5-Enc §' are printed in one cell on the 110M line; ST5-Enc's numbers are on the next (4.8B) line.",
  ],
  columns: TRANSFER_COLUMNS,
  rows: [
    group('Fine-tuning on supervised datasets'),
    ['SimCSE-RoBERTa 123M †', '84.92 92.00 94.11 89.82 91.27 88.80 75.65 88.08'],
    ['SimCSE-RoBERTa 220M †', '81.12 92.37 95.11 90.49 92.75 91.80 76.64 89.61', "Method cell blank in the text (continuation of SimCSE-RoBERTa †)."],
    ['PromptRoBERTa 123M', '85.74 91.47 94.81 90.93 92.53 90.40 77.10 89.00', 'Label reconstructed: the method cell is an image in the text file.'],
    ['ST5-Enc 4.8B', '90.83 94.44 96.33 91.68 94.84 95.40 77.91 91.63', 'Label reconstructed: the method cell is blank in the text file.'],
    group('Without fine-tuning'),
    ['BERT avg. 110M', '78.66 86.25 94.37 88.66 84.40 92.80 69.54 84.94'],
    ['ST5-Enc 4.8B §', '91.15 93.33 97.55 90.20 94.07 94.40 74.26 90.71', "Label printed on the line above (one cell 'BERT avg. <br> ST5-Enc §')."],
    ['PromptEOL OPT 1.3B', '88.06 91.55 95.90 91.55 93.08 95.00 73.97 89.87'],
    ['PromptEOL OPT 2.7B', '88.83 92.29 95.93 91.76 94.62 96.00 75.94 90.77'],
    ['PromptEOL OPT 6.7B', '90.26 92.50 96.67 91.39 94.67 96.00 77.91 91.34'],
    ['PromptEOL OPT 13B', '90.73 92.90 96.69 91.48 94.01 96.80 75.59 91.17'],
    ['PromptEOL OPT 30B', '90.95 92.77 96.99 91.79 95.28 97.00 73.97 91.25'],
    ['PromptEOL OPT 66B', '90.96 93.40 97.01 91.93 95.22 96.40 75.25 91.45'],
    ['PromptEOL LLaMA 7B', '90.40 92.90 96.88 91.57 95.11 95.40 75.13 91.06'],
    ['PromptEOL LLaMA 13B', '92.02 93.22 97.29 91.40 95.66 95.80 76.46 91.69'],
    ['PromptEOL LLaMA 30B', '91.64 93.27 97.10 91.86 95.99 95.80 78.43 92.01'],
    ['PromptEOL LLaMA 65B', '92.13 93.43 97.16 91.91 95.33 97.40 77.28 92.09'],
  ],
});

const T4_SHIFT =
  "Size and sentence reconstructed: the 1.3B sentence wraps onto a second line, which pushes the Size/Sentence columns one line below the Word/Improve columns from the fourth line on; Improve = Table 1's PromptEOL+ICL Avg. − PromptEOL Avg. for the same size, which fixes the pairing.";

const T4 = defineTable({
  paper: 'prompteol',
  file: F,
  table: 'Table 4',
  caption: 'In-context learning examples used in various model size.',
  quantity: "improvement of the STS average (Spearman's ρ × 100) from in-context learning with the demonstration (sentence, word)",
  notes: [
    'Rows are OPT model sizes; Sentence and Word are the demonstration chosen on the STS-B development set.',
    T4_SHIFT,
    "The 66B row's size and sentence are not in the text file (its word 'Tutorial' and improvement 9.35 are on the last line).",
  ],
  columns: ['Sentence', 'Word', 'Improve'],
  textColumns: ['Sentence', 'Word'],
  rows: [
    ['125M', ['A man is smoking.', 'Smoking', '0.46']],
    ['350M', ['A man is playing on a guitar and singing.', 'Music', '3.99']],
    ['1.3B', ['relating to switzerland or its people.', 'Swiss', '4.34']],
    ['2.7B', ['A jockey riding a horse.', 'Equestrian', '8.88'], T4_SHIFT],
    ['6.7B', ['The man is riding a horse.', 'Horseback-riding', '6.98'], T4_SHIFT],
    ['13B', ['meat from a deer.', 'Venison', '7.18'], T4_SHIFT],
    ['30B', ['The man is riding a motorcycle', 'Motorcycling', '6.51'], T4_SHIFT],
    ['66B', ['_', 'Tutorial', '9.35'], `${T4_SHIFT} The 66B label and its sentence are missing from the text file.`],
  ],
});

export const PROMPTEOL_TABLES: readonly PaperTable[] = [T1, T2, T3, T4];
