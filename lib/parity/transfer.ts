/**
 * Parity of the SentEval transfer-task code (lib/eval/transfer) against a golden set in the
 * layout of `golden/senteval-transfer-glove50` (format `senteval-transfer-golden/1`: SentEval's own
 * code on a bag-of-GloVe baseline; see its README). Tasks, seed, C grids and folds are read from
 * golden.json, so any set of this layout works (another seed, a subset of the tasks).
 *
 * Per task (names `transfer/<task>/...`), with the README's tolerances:
 *
 * | check       | what                                                                    | tolerance |
 * |-------------|-------------------------------------------------------------------------|-----------|
 * | load        | sample counts per split and per file (first_index, n)                  | exact |
 * | tokens      | tokenisation_samples: tokens, label, line → index, row                  | exact |
 * | coverage    | sentences, tokens, tokens_in_vocab, empty, without a known token        | exact |
 * | order       | X.rows (SentEval's sort order) and labels                               | exact |
 * | X           | SHA-256 of X (float64 LE), first_rows (MRPC: and A, B), sample rows     | bit for bit |
 * | folds       | our StratifiedKFold (numpy RandomState) vs every recorded fold          | exact |
 * | rules       | C grid; numpy mean/round(·,2), first maximum, fold means, accuracy and  | exact |
 * |             | F1 applied to SentEval's raw numbers and predictions give its scores    |       |
 * | objective   | f at the golden coef/intercept on the fold's training rows vs           | 1e-10 relative; |
 * |             | final.objective; golden predictions from those coefficients             | except |margin| < 1e-9 |
 * | optimum     | our converged fit (same rows, C) vs final.optimum: objective;           | 1e-5 relative |
 * |             | test predictions; coefficients (TREC intercepts centred)                | ≤ 1% of rows; 5% of max |coef| |
 * | solver      | our scikit-learn lbfgs (SciPy's L-BFGS-B, max_iter 100) on each final   | 2e-3 relative; |
 * |             | fit's rows and C vs SentEval's fit: the objective after the last         | ≤ 5% of rows |
 * |             | iteration, test predictions; iteration counts and objectives listed     |       |
 * | iterations  | every fit of the protocol: our iteration count vs SentEval's n_iter     | ≥ 85% equal |
 * | per-fold    | reg scores, fold devacc / test acc, k-fold scores, dev scores           | 1.5 points |
 * | result      | devacc, acc (MRPC f1) vs SentEval's `result` (informative_converged_    | 0.5 (TREC 1.5) |
 * |             | result shown beside it)                                                  |       |
 *
 * The protocol runs what SentEval runs: scikit-learn's lbfgs stopped at max_iter = 100, iterate
 * for iterate (lib/eval/transfer/lbfgsb.ts; most fits stop at the cap, so the cap decides the
 * numbers: on TREC the optimum and the capped fit differ by more than a point). Our iterates
 * equal SciPy's to rounding only (OpenBLAS sums in another order), which is as far as SentEval
 * itself reproduces across machines (the README measured task numbers moving by up to 0.11 under
 * 1e-15 relative noise in X), hence the tolerances: measured on the golden sets of seeds 1111 and
 * 2024, the objectives after the last iteration agree to ≤ 4.2e-4 relative (most to 1e-6; against
 * scikit-learn re-run here ≤ 6.3e-4, while the first 20 iterations agree to ≤ 4e-13: bench/lbfgs-iterates.ts;
 * scikit-learn itself, re-run on this machine, reproduces none of the seed-1111 set's 43 final
 * objectives bit for bit and differs by up to 2.6e-4),
 * 92–100% of the fits end at SentEval's iteration count, per-fold numbers within 1.33 points and task
 * numbers within 0.07. The converged solver (logistic-regression.ts) is checked against the
 * golden's optimum. The protocol runs on the golden's recorded folds (they are also checked
 * against ours). The `result` line gives ours vs SentEval's numbers, the chosen C per fold, how
 * many fits stopped at the cap, and our time vs SentEval's (`meta.plain_runtime_s`).
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { InputError } from '../util/errors.js';
import { readWordVectors, type WordVectors } from '../eval/transfer/bow.js';
import { bowBatcher, embedTask, type TaskMatrices } from '../eval/transfer/embed-task.js';
import { classifyTransferTask, f1Binary } from '../eval/transfer/evaluate.js';
import { blocksOf, logisticObjective } from '../eval/transfer/logistic-objective.js';
import { coefficients, encodeClasses, fitLogisticRegression, predictLogistic, thetaFrom, type LogisticModel } from '../eval/transfer/logistic-regression.js';
import { gather, gatherRows, type Matrix } from '../eval/transfer/matrix.js';
import { stratifiedKFold, type Fold } from '../eval/transfer/stratified-kfold.js';
import { firstArgmax, numpyMean, numpyRound2 } from '../eval/transfer/numpy-reductions.js';
import { sklearnRegs } from '../eval/transfer/sklearn-path.js';
import { fitLogisticRegressionSklearn } from '../eval/transfer/sklearn-lbfgs-fit.js';
import { prepareTransferTask, transferTaskSpec, type PreparedTask, type ValidationProtocol } from '../eval/transfer/tasks.js';
import { accuracy, type InnerKFoldResult, type KFoldResult, type SplitResult } from '../eval/transfer/validation.js';
import type { ParityCheck } from './check.js';

export interface TransferGoldenOptions {
  log?: (line: string) => void;
  /** The word-vector file (default: meta.vectors.file under ../../models/glove-6B-50d-subset/ beside the golden set, or beside the data root). */
  vectorsFile?: string;
  /** Only these tasks (default: every task in golden.json). */
  tasks?: string[];
}

type Json = Record<string, unknown>;

/** Tolerances of the golden README (points of accuracy unless said otherwise). */
export const TRANSFER_TOLERANCES = {
  objectiveRel: 1e-10,
  marginFloor: 1e-9,
  optimumObjectiveRel: 1e-5,
  optimumPredFraction: 0.01,
  optimumCoefRel: 0.05,
  solverObjectiveRel: 2e-3,
  solverPredFraction: 0.05,
  iterationsSameFraction: 0.85,
  perFold: 1.5,
  result: 0.5,
  resultTrec: 1.5,
} as const;

function at(o: unknown, path: string): unknown {
  let v: unknown = o;
  for (const k of path.split('.')) {
    if (typeof v !== 'object' || v === null || !(k in (v as Json))) throw new InputError(`golden.json: '${path}' is missing (at '${k}')`);
    v = (v as Json)[k];
  }
  return v;
}
const num = (o: unknown, p: string): number => {
  const v = at(o, p);
  if (typeof v !== 'number') throw new InputError(`golden.json: '${p}' is not a number`);
  return v;
};
const arr = <T = unknown>(o: unknown, p: string): T[] => {
  const v = at(o, p);
  if (!Array.isArray(v)) throw new InputError(`golden.json: '${p}' is not an array`);
  return v as T[];
};

function pass(name: string, detail: string): ParityCheck {
  return { name, ok: true, detail };
}
function fail(name: string, detail: string): ParityCheck {
  return { name, ok: false, detail };
}
function verdict(name: string, problems: string[], okDetail: string): ParityCheck {
  return problems.length === 0 ? pass(name, okDetail) : fail(name, `${problems.length} mismatch(es): ${problems.slice(0, 5).join('; ')}${problems.length > 5 ? '; …' : ''}`);
}

function sha256f64(m: Matrix): string {
  const le = new Float64Array(m.data); // typed arrays are little-endian on every platform Node runs on
  return createHash('sha256').update(Buffer.from(le.buffer, le.byteOffset, le.byteLength)).digest('hex');
}

const fmt = (v: number | undefined) => (v === undefined ? '—' : v.toFixed(2));

/** The data root that holds senteval-transfer/ (also accepts the senteval-transfer folder itself). */
function dataRoot(dataDir: string): string {
  const abs = resolve(dataDir);
  if (existsSync(join(abs, 'senteval-transfer'))) return abs;
  if (basename(abs) === 'senteval-transfer') return dirname(abs);
  return abs;
}

function findVectors(goldenDir: string, dataDir: string, file: string, given?: string): { file?: string; looked: string[] } {
  const looked = given
    ? [given]
    : [join(goldenDir, '..', '..', 'models', 'glove-6B-50d-subset', file), join(dataRoot(dataDir), '..', 'models', 'glove-6B-50d-subset', file)];
  return { file: looked.find((f) => existsSync(f) && statSync(f).isFile()), looked };
}

/** Rows of a split matrix per golden split name (binary tasks: 'all'). */
function splitNames(rec: Json): string[] {
  const rows = at(rec, 'X.rows') as Json;
  return 'index' in rows ? ['all'] : Object.keys(rows);
}

function rowsOf(rec: Json, split: string): { index: number[]; label: number[] } {
  const rows = at(rec, 'X.rows') as Json;
  const r = (split === 'all' && 'index' in rows ? rows : rows[split]) as { index: number[]; label: number[] } | undefined;
  if (!r) throw new InputError(`golden.json: X.rows has no split '${split}'`);
  return r;
}

function checkLoad(task: string, rec: Json, p: PreparedTask): ParityCheck {
  const name = `transfer/${task}/load`;
  const problems: string[] = [];
  const n = at(rec, 'data.n');
  for (const split of splitNames(rec)) {
    const want = typeof n === 'number' ? n : (n as Record<string, number>)[split];
    const got = p.splits[split]?.labels.length;
    if (got !== want) problems.push(`${split}: ${got} samples, SentEval ${want}`);
  }
  const files = at(rec, 'data.files');
  let perFile = '';
  if (Array.isArray(files) && typeof files[0] === 'object') {
    // binary tasks: per file first_index and n, from where each loaded sample came from
    const s = p.splits.all;
    const count = new Map<string, number>();
    const first = new Map<string, number>();
    s.sources.forEach((src, r) => {
      const f = basename(src.file);
      count.set(f, (count.get(f) ?? 0) + 1);
      const idx = s.order[r];
      first.set(f, Math.min(first.get(f) ?? Infinity, idx));
    });
    for (const f of files as { file: string; label: number; first_index: number; n: number }[]) {
      if (count.get(f.file) !== f.n || first.get(f.file) !== f.first_index) problems.push(`${f.file}: ${count.get(f.file)} lines from index ${first.get(f.file)}, SentEval ${f.n} from ${f.first_index}`);
      const labels = new Set(s.sources.map((src, r) => (basename(src.file) === f.file ? s.labels[r] : -1)).filter((l) => l >= 0));
      if (labels.size !== 1 || !labels.has(f.label)) problems.push(`${f.file}: labels ${[...labels]}, SentEval ${f.label}`);
    }
    perFile = `; files ${(files as { file: string; n: number }[]).map((f) => `${f.file} ${f.n}`).join(', ')}`;
  }
  return verdict(name, problems, `samples ${splitNames(rec).map((s) => `${s} ${p.splits[s]?.labels.length}`).join(', ')}${perFile}`);
}

function checkTokens(task: string, rec: Json, p: PreparedTask, m: TaskMatrices): ParityCheck {
  const name = `transfer/${task}/tokens`;
  const problems: string[] = [];
  const samples = arr<Json>(rec, 'tokenisation_samples');
  const pairs = p.spec.pairs;
  for (const smp of samples) {
    const split = smp.split as string;
    const s = p.splits[split];
    if (!s) {
      problems.push(`no split ${split}`);
      continue;
    }
    const index = smp.index as number;
    const row = Array.prototype.indexOf.call(s.order, index) as number;
    const what = `${smp.file}:${(smp.line_index as number) + 1}`;
    if (row !== smp.row) problems.push(`${what}: row ${row}, SentEval ${smp.row}`);
    if (row < 0) continue;
    const src = s.sources[row];
    if (basename(src.file) !== basename(smp.file as string) || src.line - 1 !== smp.line_index) problems.push(`${what}: we read it from ${basename(src.file)}:${src.line}`);
    if (s.labels[row] !== smp.label) problems.push(`${what}: label ${s.labels[row]}, SentEval ${smp.label}`);
    const same = (a: string[] | undefined, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
    if (pairs) {
      if (!same(s.tokens[row], smp.tokens_A) || !same(s.tokensB?.[row], smp.tokens_B)) problems.push(`${what}: tokens differ`);
    } else if (!same(s.tokens[row], smp.tokens)) problems.push(`${what}: tokens ${JSON.stringify(s.tokens[row]).slice(0, 80)} vs ${JSON.stringify(smp.tokens).slice(0, 80)}`);
    // the sample's embedding(s) equal our row of X bit for bit
    const x = m.splits[split].x;
    const ours = Array.from(x.data.subarray(row * x.cols, (row + 1) * x.cols));
    let want: number[];
    if (pairs) {
      const a = smp.embedding_A as number[];
      const b = smp.embedding_B as number[];
      want = [...a.map((v, k) => Math.abs(v - b[k])), ...a.map((v, k) => v * b[k])];
    } else want = smp.embedding as number[];
    if (!ours.every((v, k) => Object.is(v, want[k]))) problems.push(`${what}: embedding differs`);
  }
  return verdict(name, problems, `${samples.length} samples: tokens, labels, line → index → row and embedding exact`);
}

function coverageOf(sentences: string[][], wv: WordVectors) {
  let tokens = 0;
  let found = 0;
  let empty = 0;
  let none = 0;
  for (const s of sentences) {
    let f = 0;
    for (const t of s) if (wv.vectors.has(t)) f++;
    tokens += s.length;
    found += f;
    if (s.length === 0) empty++;
    else if (f === 0) none++;
  }
  return { sentences: sentences.length, tokens, tokens_in_vocab: found, empty_sentences: empty, sentences_without_known_token: none };
}

function checkCoverage(task: string, rec: Json, p: PreparedTask, wv: WordVectors): ParityCheck {
  const name = `transfer/${task}/coverage`;
  const cov = at(rec, 'data.coverage') as Json;
  const problems: string[] = [];
  const details: string[] = [];
  for (const split of splitNames(rec)) {
    const want = (split === 'all' ? cov : cov[split]) as Record<string, number>;
    const s = p.splits[split];
    const ours = coverageOf(p.spec.pairs ? [...s.tokens, ...(s.tokensB ?? [])] : s.tokens, wv);
    for (const [k, v] of Object.entries(ours)) if (want[k] !== v) problems.push(`${split} ${k}: ${v}, SentEval ${want[k]}`);
    details.push(`${split} ${ours.tokens_in_vocab}/${ours.tokens} tokens known, ${ours.empty_sentences} empty, ${ours.sentences_without_known_token} without a known token`);
  }
  return verdict(name, problems, details.join('; '));
}

function checkOrder(task: string, rec: Json, p: PreparedTask): ParityCheck {
  const name = `transfer/${task}/order`;
  const problems: string[] = [];
  for (const split of splitNames(rec)) {
    const want = rowsOf(rec, split);
    const s = p.splits[split];
    const bad = want.index.findIndex((v, r) => s.order[r] !== v || s.labels[r] !== want.label[r]);
    if (want.index.length !== s.order.length) problems.push(`${split}: ${s.order.length} rows, SentEval ${want.index.length}`);
    else if (bad >= 0) problems.push(`${split} row ${bad}: sample ${s.order[bad]} label ${s.labels[bad]}, SentEval ${want.index[bad]} label ${want.label[bad]}`);
  }
  return verdict(name, problems, `rows sorted by (${p.spec.pairs ? 'len A, len B' : 'len'}, label) as SentEval: ${splitNames(rec).join(', ')} identical`);
}

function checkX(task: string, rec: Json, m: TaskMatrices): ParityCheck {
  const name = `transfer/${task}/X`;
  const problems: string[] = [];
  const digest = at(rec, 'X.digest') as Json;
  const first = at(rec, 'X.first_rows') as unknown;
  const splits = splitNames(rec);
  for (const split of splits) {
    const x = m.splits[split].x;
    const d = (split === 'all' ? digest : digest[split]) as { shape: number[]; sha256_f64le: string };
    if (x.rows !== d.shape[0] || x.cols !== d.shape[1]) problems.push(`${split}: shape ${x.rows}×${x.cols}, SentEval ${d.shape.join('×')}`);
    else if (sha256f64(x) !== d.sha256_f64le) problems.push(`${split}: SHA-256 ${sha256f64(x).slice(0, 12)}…, SentEval ${d.sha256_f64le.slice(0, 12)}…`);
    const fr = (split === 'all' ? first : (first as Json)[split]) as number[][];
    fr.forEach((row, r) => {
      if (!row.every((v, k) => Object.is(v, x.data[r * x.cols + k]))) problems.push(`${split} first_rows[${r}] differs`);
    });
  }
  return verdict(name, problems, `SHA-256 of float64 X equal (${splits.map((s) => `${s} ${m.splits[s].x.rows}×${m.splits[s].x.cols}`).join(', ')}); first rows bit for bit`);
}

function foldsEqual(a: Fold[], b: number[][]): string | undefined {
  if (a.length !== b.length) return `${a.length} folds, SentEval ${b.length}`;
  for (let f = 0; f < a.length; f++) {
    const t = a[f].test;
    if (t.length !== b[f].length || b[f].some((v, i) => t[i] !== v)) return `fold ${f} differs`;
  }
  return undefined;
}

/** Golden folds as Fold[] (train = the rest, ascending). */
function toFolds(tests: number[][], n: number): Fold[] {
  return tests.map((t) => {
    const inTest = new Uint8Array(n);
    for (const i of t) inTest[i] = 1;
    const train: number[] = [];
    for (let i = 0; i < n; i++) if (!inTest[i]) train.push(i);
    return { train: Int32Array.from(train), test: Int32Array.from(t) };
  });
}

function checkFolds(task: string, rec: Json, m: TaskMatrices): ParityCheck {
  const name = `transfer/${task}/folds`;
  const cv = at(rec, 'cv') as Json;
  const problems: string[] = [];
  if (cv.classifier === 'InnerKFoldClassifier') {
    const k = num(cv, 'k');
    const y = m.splits.all.y;
    const outer = stratifiedKFold(y, { nSplits: k, shuffle: true, randomState: num(cv, 'outer_random_state') });
    const gf = arr<Json>(cv, 'folds');
    const e = foldsEqual(outer, gf.map((f) => f.test_idx as number[]));
    if (e) problems.push(`outer: ${e}`);
    outer.forEach((f, i) => {
      const inner = stratifiedKFold(gather(y, f.train), { nSplits: k, shuffle: true, randomState: num(cv, 'inner_random_state') });
      const ei = foldsEqual(inner, gf[i]?.inner_test_idx as number[][]);
      if (ei) problems.push(`outer fold ${i} inner: ${ei}`);
    });
    return verdict(name, problems, `StratifiedKFold(${k}, shuffle, random_state=${cv.outer_random_state}): ${outer.length} outer and ${outer.length * k} inner folds identical`);
  }
  if (cv.classifier === 'KFoldClassifier') {
    const k = num(cv, 'k');
    const folds = stratifiedKFold(m.splits.train.y, { nSplits: k, shuffle: true, randomState: num(cv, 'random_state') });
    const e = foldsEqual(folds, arr<number[]>(cv, 'folds_test_idx'));
    if (e) problems.push(e);
    return verdict(name, problems, `StratifiedKFold(${k}, shuffle, random_state=${cv.random_state}) over train: ${folds.length} folds identical`);
  }
  return pass(name, `${cv.classifier}: no folds`);
}

/**
 * The C grid, and SentEval's scoring rules applied to its own raw numbers: numpy mean and
 * round(·, 2), the first maximum, the means of the folds, accuracy and MRPC's F1 from its
 * predictions. Exact.
 */
function checkRules(task: string, rec: Json, m: TaskMatrices, protocol: ValidationProtocol): ParityCheck {
  const name = `transfer/${task}/rules`;
  const cv = at(rec, 'cv') as Json;
  const res = at(rec, 'result') as Record<string, number>;
  const problems: string[] = [];
  const eq = (what: string, ours: number, want: unknown) => {
    if (ours !== want) problems.push(`${what}: ${ours} vs SentEval ${String(want)}`);
  };
  const regs = arr<number>(cv, 'regs');
  const grid = sklearnRegs(protocol);
  if (grid.length !== regs.length || grid.some((c, i) => c !== regs[i])) problems.push(`C grid ${grid.join(',')} vs SentEval ${regs.join(',')}`);
  const pick = (scores: number[], what: string, chosen: unknown, best: unknown) => {
    const b = firstArgmax(scores);
    eq(`${what} chosen C`, regs[b], chosen);
    eq(`${what} best score`, scores[b], best);
  };
  const final = (cv.classifier === 'InnerKFoldClassifier' ? undefined : at(cv, 'final')) as Json | undefined;
  if (cv.classifier === 'InnerKFoldClassifier') {
    const folds = arr<Json>(cv, 'folds');
    folds.forEach((f, i) => {
      const scores = arr<number[]>(f, 'inner_scores').map((s) => numpyRound2(100 * numpyMean(s)));
      scores.forEach((s, r) => eq(`fold ${i} C=${regs[r]} score`, s, arr<number>(f, 'reg_scores')[r]));
      pick(scores, `fold ${i}`, f.chosen_reg, f.devacc);
      eq(`fold ${i} test acc`, numpyRound2(100 * num(f, 'test_acc_raw')), f.test_acc);
      const fin = at(f, 'final') as Json;
      eq(`fold ${i} test accuracy from predictions`, num(fin, 'n_correct') / num(fin, 'n_test'), f.test_acc_raw);
    });
    eq('devacc', numpyRound2(numpyMean(folds.map((f) => f.devacc as number))), res.devacc);
    eq('acc', numpyRound2(numpyMean(folds.map((f) => f.test_acc as number))), res.acc);
  } else if (cv.classifier === 'KFoldClassifier') {
    const scores = arr<number[]>(cv, 'fold_scores').map((s) => numpyRound2(100 * numpyMean(s)));
    scores.forEach((s, r) => eq(`C=${regs[r]} score`, s, arr<number>(cv, 'reg_scores')[r]));
    pick(scores, 'k-fold', cv.chosen_reg, res.devacc);
  } else {
    const scores = arr<number>(cv, 'dev_scores_raw').map((s) => numpyRound2(100 * s));
    scores.forEach((s, r) => eq(`C=${regs[r]} dev score`, s, arr<number>(cv, 'dev_scores')[r]));
    pick(scores, 'dev', cv.chosen_reg, res.devacc);
  }
  if (final) {
    // test accuracy (and MRPC's F1) from SentEval's own test predictions
    const pred = Int32Array.from(arr<number>(final, 'test_pred'));
    const y = m.splits.test.y;
    eq('test accuracy from predictions', numpyRound2(100 * accuracy(pred, y)), res.acc);
    if (res.f1 !== undefined) eq('f1 from predictions', numpyRound2(100 * f1Binary(y, pred)), res.f1);
  }
  return verdict(name, problems, `C grid ${regs.join(', ')}; numpy mean/round, first maximum, fold means${res.f1 !== undefined ? ', F1' : ''} reproduce SentEval's scores from its raw numbers`);
}

interface FinalFit {
  label: string;
  xTrain: Matrix;
  yTrain: Int32Array;
  xTest: Matrix;
  final: Json;
}

function finalFits(rec: Json, m: TaskMatrices): FinalFit[] {
  const cv = at(rec, 'cv') as Json;
  if (cv.classifier === 'InnerKFoldClassifier') {
    const { x, y } = m.splits.all;
    return arr<Json>(cv, 'folds').map((f, i) => {
      const [fold] = toFolds([f.test_idx as number[]], y.length);
      return { label: `fold ${i}`, xTrain: gatherRows(x, fold.train), yTrain: gather(y, fold.train), xTest: gatherRows(x, fold.test), final: at(f, 'final') as Json };
    });
  }
  const test = m.splits.test;
  const train = m.splits.train;
  return [{ label: 'final', xTrain: train.x, yTrain: train.y, xTest: test.x, final: at(cv, 'final') as Json }];
}

function checkObjective(task: string, fits: FinalFit[]): ParityCheck {
  const name = `transfer/${task}/objective`;
  const tol = TRANSFER_TOLERANCES;
  const problems: string[] = [];
  let worst = 0;
  let predsChecked = 0;
  for (const f of fits) {
    const coef = arr<number[]>(f.final, 'coef');
    const intercept = arr<number>(f.final, 'intercept');
    const classes = arr<number>(f.final, 'classes');
    const C = num(f.final, 'C');
    const { classes: ours, y } = encodeClasses(f.yTrain);
    if (ours.length !== classes.length || classes.some((c, i) => c !== ours[i])) problems.push(`${f.label}: classes ${Array.from(ours)}, SentEval ${classes}`);
    const theta = thetaFrom(coef, intercept);
    const obj = logisticObjective({ x: f.xTrain, y, nClasses: classes.length, C }, theta);
    const rel = Math.abs(obj - num(f.final, 'objective')) / Math.abs(num(f.final, 'objective'));
    worst = Math.max(worst, rel);
    if (!(rel <= tol.objectiveRel)) problems.push(`${f.label}: objective ${obj} vs ${num(f.final, 'objective')} (rel ${rel.toExponential(2)})`);
    // predictions of the golden coefficients, except where the golden margin is at rounding level
    const model: LogisticModel = { classes: Int32Array.from(classes), C, dim: f.xTrain.cols, theta, objective: obj, solver: { iterations: 0, evaluations: 0, converged: false, decrement: NaN, reason: 'max-iter' } };
    const pred = predictLogistic(model, f.xTest);
    const want = arr<number>(f.final, 'test_pred');
    const margin = arr<number>(f.final, 'test_margin');
    want.forEach((v, i) => {
      if (Math.abs(margin[i]) < tol.marginFloor) return;
      predsChecked++;
      if (pred[i] !== v) problems.push(`${f.label} test row ${i}: predicted ${pred[i]}, SentEval ${v} (margin ${margin[i]})`);
    });
  }
  return verdict(name, problems, `${fits.length} fit(s): objective at SentEval's coefficients max rel diff ${worst.toExponential(2)} (tol ${tol.objectiveRel.toExponential(0)}); ${predsChecked} test predictions equal`);
}

function checkOptimum(task: string, fits: FinalFit[]): ParityCheck {
  const name = `transfer/${task}/optimum`;
  const tol = TRANSFER_TOLERANCES;
  const problems: string[] = [];
  let worstObj = 0;
  let worstCoef = 0;
  let worstPred = 0;
  let unconverged = 0;
  let iters = 0;
  for (const f of fits) {
    const opt = at(f.final, 'optimum') as Json;
    const C = num(f.final, 'C');
    const ours = fitLogisticRegression(f.xTrain, f.yTrain, C);
    iters += ours.solver.iterations;
    if (!ours.solver.converged) unconverged++;
    const optObj = num(opt, 'objective');
    const rel = Math.abs(ours.objective - optObj) / Math.abs(optObj);
    worstObj = Math.max(worstObj, rel);
    if (!(rel <= tol.optimumObjectiveRel)) problems.push(`${f.label}: objective ${ours.objective} vs optimum ${optObj} (rel ${rel.toExponential(2)})`);
    // test predictions vs the optimum's (from its coefficients)
    const optCoef = arr<number[]>(opt, 'coef');
    const optIntercept = arr<number>(opt, 'intercept');
    const K = ours.classes.length;
    const optModel: LogisticModel = { ...ours, theta: thetaFrom(optCoef, optIntercept) };
    const a = predictLogistic(ours, f.xTest);
    const b = predictLogistic(optModel, f.xTest);
    let differ = 0;
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) differ++;
    worstPred = Math.max(worstPred, differ / a.length);
    if (differ / a.length > tol.optimumPredFraction) problems.push(`${f.label}: ${differ} of ${a.length} test predictions differ from the optimum's`);
    // coefficients relative to the largest optimum coefficient; multinomial intercepts centred
    const { coef, intercept } = coefficients(ours);
    let scale = 0;
    let diff = 0;
    optCoef.forEach((w, c) =>
      w.forEach((v, k) => {
        scale = Math.max(scale, Math.abs(v));
        diff = Math.max(diff, Math.abs(coef[c][k] - v));
      }),
    );
    const centre = (v: number[]) => (blocksOf(K) > 1 ? v.map((x) => x - v.reduce((s, t) => s + t, 0) / v.length) : v);
    const [ic, oc] = [centre(intercept), centre(optIntercept)];
    ic.forEach((v, c) => (diff = Math.max(diff, Math.abs(v - oc[c]))));
    const coefRel = diff / scale;
    worstCoef = Math.max(worstCoef, coefRel);
    if (!(coefRel <= tol.optimumCoefRel)) problems.push(`${f.label}: coefficients differ from the optimum's by ${(100 * coefRel).toFixed(2)}% of the largest`);
  }
  if (unconverged > 0) problems.push(`${unconverged} fit(s) did not converge`);
  return verdict(
    name,
    problems,
    `${fits.length} fit(s) vs sklearn newton-cg optimum: objective max rel ${worstObj.toExponential(2)} (tol ${tol.optimumObjectiveRel.toExponential(0)}), ` +
      `predictions differ on ≤ ${(100 * worstPred).toFixed(2)}% of test rows (tol ${100 * tol.optimumPredFraction}%), ` +
      `coefficients within ${(100 * worstCoef).toFixed(3)}% of the largest (tol ${100 * tol.optimumCoefRel}%); ${iters} L-BFGS iterations`,
  );
}

/**
 * Our scikit-learn lbfgs (SciPy's L-BFGS-B, capped at max_iter 100) on each golden final fit's
 * rows and C, against what SentEval's fit recorded: the iteration count, the objective after the
 * last iteration, and the test predictions. Iterates agree to rounding (BLAS sums in another
 * order), so a capped fit's objective can differ in the digits that the remaining descent
 * changes; the detail gives, per fit, ours, SentEval's and the optimum's objective so that a
 * mismatch points at the solver. Iteration counts are compared over all fits by checkIterations.
 */
function checkSolver(task: string, fits: FinalFit[]): ParityCheck {
  const name = `transfer/${task}/solver`;
  const tol = TRANSFER_TOLERANCES;
  const problems: string[] = [];
  const lines: string[] = [];
  let worstRel = 0;
  let worstPred = 0;
  for (const f of fits) {
    const C = num(f.final, 'C');
    const goldIter = num(f.final, 'n_iter');
    const goldObj = num(f.final, 'objective');
    const optObj = num(f.final, 'optimum.objective');
    const ours = fitLogisticRegressionSklearn(f.xTrain, f.yTrain, C);
    const rel = Math.abs(ours.objective - goldObj) / Math.abs(goldObj);
    worstRel = Math.max(worstRel, rel);
    const pred = predictLogistic(ours, f.xTest);
    const want = arr<number>(f.final, 'test_pred');
    let differ = 0;
    want.forEach((v, i) => {
      if (pred[i] !== v) differ++;
    });
    worstPred = Math.max(worstPred, differ / want.length);
    const it = ours.solver.iterations;
    lines.push(
      `${f.label} C=${C}: ${it} iterations (SentEval ${goldIter}), objective after the last ${ours.objective.toPrecision(13)} (SentEval ${goldObj.toPrecision(13)}, rel ${rel.toExponential(1)}; ` +
        `optimum ${((goldObj - optObj) / Math.abs(optObj)).toExponential(1)} rel below), ${differ}/${want.length} test predictions differ`,
    );
    if (!(rel <= tol.solverObjectiveRel)) problems.push(`${f.label}: objective after the last iteration ${ours.objective} vs SentEval ${goldObj} (rel ${rel.toExponential(2)} > ${tol.solverObjectiveRel})`);
    if (differ / want.length > tol.solverPredFraction) problems.push(`${f.label}: ${differ} of ${want.length} test predictions differ from SentEval's`);
  }
  const head = `${fits.length} fit(s), SciPy L-BFGS-B port capped at 100: objective within rel ${worstRel.toExponential(1)} of SentEval's (tol ${tol.solverObjectiveRel}), test predictions differ on ≤ ${(100 * worstPred).toFixed(2)}% (tol ${100 * tol.solverPredFraction}%)`;
  return problems.length ? fail(name, `${problems.slice(0, 5).join('; ')}${problems.length > 5 ? '; …' : ''} — ${lines.join('; ')}`) : pass(name, `${head}; ${lines.join('; ')}`);
}

/**
 * The iteration count of every fit of the protocol (our capped lbfgs on the golden folds) against
 * SentEval's recorded n_iter (inner_n_iter, fold_n_iter, n_iter). A fit that stops on its own just
 * before the cap ends on f's relative decrease falling under factr·ε, which rounding-level
 * differences move by some iterations either way (measured on the seed-1111 set: 92.3% of MR's 600
 * fits, 95.5–100% of the other tasks' have SentEval's count exactly, the others end up to 20
 * iterations apart; seed 2024: 100%); so the check is the share of fits with SentEval's exact count.
 */
function checkIterations(task: string, rec: Json, r: InnerKFoldResult | KFoldResult | SplitResult): ParityCheck {
  const name = `transfer/${task}/iterations`;
  const tol = TRANSFER_TOLERANCES.iterationsSameFraction;
  const cv = at(rec, 'cv') as Json;
  const pairs: [string, number, number][] = [];
  if (r.protocol === 'inner-kfold') {
    arr<Json>(cv, 'folds').forEach((gf, f) => arr<number[]>(gf, 'inner_n_iter').forEach((row, i) => row.forEach((v, j) => pairs.push([`fold ${f} C=${r.regs[i]} inner ${j}`, r.folds[f].innerIterations[i][j], v]))));
  } else if (r.protocol === 'kfold') {
    arr<number[]>(cv, 'fold_n_iter').forEach((row, i) => row.forEach((v, j) => pairs.push([`C=${r.regs[i]} fold ${j}`, r.foldIterations[i][j], v])));
  } else arr<number>(cv, 'n_iter').forEach((v, i) => pairs.push([`C=${r.regs[i]}`, r.iterations[i], v]));
  let equal = 0;
  let bothAtCap = 0;
  let worst = 0;
  const differ: string[] = [];
  for (const [what, ours, want] of pairs) {
    if (ours === want) equal++;
    else differ.push(`${what}: ${ours} vs ${want}`);
    if (ours >= 100 && want >= 100) bothAtCap++;
    worst = Math.max(worst, Math.abs(ours - want));
  }
  const share = pairs.length ? equal / pairs.length : 1;
  const detail =
    `${pairs.length} fits: ${equal} (${(100 * share).toFixed(1)}%, tol ${100 * tol}%) with SentEval's iteration count, ${bothAtCap} at the cap of 100 in both; ` +
    `largest gap ${worst}${differ.length ? ` (${differ.slice(0, 3).join('; ')}${differ.length > 3 ? '; …' : ''})` : ''}`;
  return share >= tol ? pass(name, detail) : fail(name, detail);
}

function checkPerFold(task: string, rec: Json, r: InnerKFoldResult | KFoldResult | SplitResult): ParityCheck {
  const name = `transfer/${task}/per-fold`;
  const tol = TRANSFER_TOLERANCES.perFold;
  const cv = at(rec, 'cv') as Json;
  const problems: string[] = [];
  let worst = 0;
  let count = 0;
  let worstWhat = '';
  const cmp = (what: string, ours: number, want: number) => {
    const d = Math.abs(ours - want);
    if (d > worst) [worst, worstWhat] = [d, `${what} ${fmt(ours)} vs ${fmt(want)}`];
    count++;
    if (!(d <= tol)) problems.push(`${what}: ${fmt(ours)} vs ${fmt(want)}`);
  };
  if (r.protocol === 'inner-kfold') {
    arr<Json>(cv, 'folds').forEach((gf, f) => {
      const of = r.folds[f];
      arr<number>(gf, 'reg_scores').forEach((v, i) => cmp(`fold ${f} C=${r.regs[i]} score`, of.regScores[i], v));
      cmp(`fold ${f} devacc`, of.devacc, num(gf, 'devacc'));
      cmp(`fold ${f} test acc`, of.testAcc, num(gf, 'test_acc'));
    });
  } else if (r.protocol === 'kfold') {
    arr<number[]>(cv, 'fold_scores').forEach((row, i) => row.forEach((v, j) => cmp(`C=${r.regs[i]} fold ${j}`, 100 * r.foldScores[i][j], 100 * v)));
    arr<number>(cv, 'reg_scores').forEach((v, i) => cmp(`C=${r.regs[i]} score`, r.regScores[i], v));
  } else {
    arr<number>(cv, 'dev_scores').forEach((v, i) => cmp(`C=${r.regs[i]} dev`, r.devScores[i], v));
  }
  return verdict(name, problems, `${count} per-fold numbers within ${worst.toFixed(2)} points of SentEval's (tol ${tol}; largest: ${worstWhat})`);
}

function chosenRegs(r: InnerKFoldResult | KFoldResult | SplitResult): string {
  return r.protocol === 'inner-kfold' ? r.folds.map((f) => f.chosenReg).join('/') : String(r.chosenReg);
}

function goldenChosen(cv: Json): string {
  return cv.classifier === 'InnerKFoldClassifier' ? arr<Json>(cv, 'folds').map((f) => f.chosen_reg).join('/') : String(cv.chosen_reg);
}

/** Every check of one task. */
async function checkTask(task: string, g: Json, dataDir: string, wv: WordVectors, o: TransferGoldenOptions): Promise<ParityCheck[]> {
  const rec = at(g, `tasks.${task}`) as Json;
  const out: ParityCheck[] = [];
  const spec = transferTaskSpec(task);
  const expected = spec.protocol === 'inner-kfold' ? 'InnerKFoldClassifier' : spec.protocol === 'kfold' ? 'KFoldClassifier' : 'SplitClassifier';
  const cv = at(rec, 'cv') as Json;
  if (cv.classifier !== expected) return [fail(`transfer/${task}/protocol`, `golden uses ${String(cv.classifier)}, SentEval's ${task} is ${expected}`)];
  const t0 = performance.now();
  const p = prepareTransferTask(task, { dataDir: dataRoot(dataDir) });
  const m = await embedTask(p, bowBatcher(wv));
  const tEmbed = (performance.now() - t0) / 1000;
  out.push(checkLoad(task, rec, p), checkTokens(task, rec, p, m), checkCoverage(task, rec, p, wv), checkOrder(task, rec, p), checkX(task, rec, m), checkFolds(task, rec, m));
  out.push(checkRules(task, rec, m, spec.protocol));
  const fits = finalFits(rec, m);
  out.push(checkObjective(task, fits));
  o.log?.(`transfer ${task}: ${fits.length} converged fit(s) vs the optimum`);
  out.push(checkOptimum(task, fits));
  o.log?.(`transfer ${task}: ${fits.length} capped lbfgs fit(s) vs SentEval's`);
  out.push(checkSolver(task, fits));
  // the whole protocol on the recorded folds
  const n = spec.protocol === 'inner-kfold' ? m.splits.all.y.length : m.splits.train.y.length;
  let folds: { outer: Fold[]; inner: Fold[][] } | Fold[] | undefined;
  if (cv.classifier === 'InnerKFoldClassifier') {
    const gf = arr<Json>(cv, 'folds');
    const outer = toFolds(gf.map((f) => f.test_idx as number[]), n);
    folds = { outer, inner: gf.map((f, i) => toFolds(f.inner_test_idx as number[][], outer[i].train.length)) };
  } else if (cv.classifier === 'KFoldClassifier') folds = toFolds(arr<number[]>(cv, 'folds_test_idx'), n);
  o.log?.(`transfer ${task}: running ${expected} (${spec.protocol})`);
  const t1 = performance.now();
  const r = await classifyTransferTask(spec, m, { seed: num(g, 'meta.seed'), kfold: typeof cv.k === 'number' ? cv.k : 10, folds });
  const tClassify = (performance.now() - t1) / 1000;
  out.push(checkIterations(task, rec, r.detail));
  out.push(checkPerFold(task, rec, r.detail));
  const res = at(rec, 'result') as Record<string, number>;
  const conv = (rec.informative_converged_result ?? {}) as Record<string, number>;
  const tol = TRANSFER_TOLERANCES;
  const tRes = task === 'TREC' ? tol.resultTrec : tol.result;
  const problems: string[] = [];
  const parts: string[] = [];
  for (const key of ['devacc', 'acc', 'f1'] as const) {
    const ours = r[key];
    if (res[key] === undefined && ours === undefined) continue;
    if (ours === undefined || res[key] === undefined) {
      problems.push(`${key}: ours ${fmt(ours)}, SentEval ${fmt(res[key])}`);
      continue;
    }
    const d = Math.abs(ours - res[key]);
    if (!(d <= tRes)) problems.push(`${key} ${fmt(ours)} vs SentEval ${fmt(res[key])} (|diff| ${d.toFixed(2)} > ${tRes})`);
    parts.push(`${key} ${fmt(ours)} vs SentEval ${fmt(res[key])}${conv[key] !== undefined ? ` (converged ${fmt(conv[key])})` : ''}`);
  }
  for (const key of ['ndev', 'ntest'] as const) if (res[key] !== undefined && r[key] !== res[key]) problems.push(`${key} ${r[key]} vs ${res[key]}`);
  const sentevalSeconds = (at(g, 'meta') as Json).plain_runtime_s as Record<string, number> | undefined;
  const detail =
    `${parts.join(', ')}; C ${chosenRegs(r.detail)} (SentEval ${goldenChosen(cv)}); tol ${tRes}; ${r.detail.fits} lbfgs fits, ${r.detail.unconverged} stopped at the cap; ` +
    `${(tEmbed + tClassify).toFixed(1)} s (embed ${tEmbed.toFixed(1)}, classify ${tClassify.toFixed(1)}) vs SentEval ${sentevalSeconds?.[task] ?? rec.runtime_s} s`;
  out.push(problems.length ? fail(`transfer/${task}/result`, `${problems.join('; ')} — ${detail}`) : pass(`transfer/${task}/result`, detail));
  return out;
}

/**
 * Runs every check on a golden set of the senteval-transfer layout. `dataDir` is the data root
 * (holding senteval-transfer/), or that folder itself.
 */
export async function checkTransferGolden(goldenDir: string, dataDir: string, opts: TransferGoldenOptions = {}): Promise<ParityCheck[]> {
  const file = join(goldenDir, 'golden.json');
  if (!existsSync(file)) return [fail('transfer', `${file} is missing`)];
  let g: Json;
  try {
    g = JSON.parse(readFileSync(file, 'utf8')) as Json;
  } catch (e) {
    return [fail('transfer', `${file}: not JSON (${(e as Error).message})`)];
  }
  if (g.format !== 'senteval-transfer-golden/1') return [fail('transfer/format', `${file}: format ${JSON.stringify(g.format)}, expected "senteval-transfer-golden/1"`)];
  const out: ParityCheck[] = [];
  // the word vectors: the file the golden names, with its checksum
  let wv: WordVectors;
  try {
    const vec = at(g, 'meta.vectors') as { file: string; sha256: string; dim: number };
    const found = findVectors(goldenDir, dataDir, vec.file, opts.vectorsFile);
    if (!found.file) return [fail('transfer/vectors', `word-vector file ${vec.file} not found; looked at ${found.looked.join(', ')} (pass vectorsFile)`)];
    const sha = createHash('sha256').update(readFileSync(found.file)).digest('hex');
    wv = readWordVectors(found.file);
    const ok = sha === vec.sha256 && wv.dim === vec.dim;
    out.push({ name: 'transfer/vectors', ok, detail: `${found.file}: sha256 ${sha.slice(0, 12)}… ${sha === vec.sha256 ? '=' : '≠'} golden, dim ${wv.dim} (golden ${vec.dim}), ${wv.vectors.size} entries (header line kept as a word, as bow.py)` });
    if (!ok) return out;
  } catch (e) {
    return [...out, fail('transfer/vectors', (e as Error).message)];
  }
  const listed = Object.keys((g.tasks ?? {}) as Json);
  const tasks = opts.tasks ?? (Array.isArray((g.meta as Json)?.tasks) ? ((g.meta as Json).tasks as string[]) : listed);
  for (const t of tasks) {
    if (!listed.includes(t)) {
      out.push(fail(`transfer/${t}`, `task ${t} is listed in meta.tasks but has no record in tasks`));
      continue;
    }
    opts.log?.(`transfer ${t}: loading, embedding and checking`);
    try {
      out.push(...(await checkTask(t, g, dataDir, wv, opts)));
    } catch (e) {
      out.push(fail(`transfer/${t}`, `error: ${(e as Error).message}`));
    }
  }
  return out;
}
