/**
 * SentEval's solver, iterate by iterate (issue 29, item 6): our scikit-learn lbfgs
 * (lib/eval/transfer/sklearn-lbfgs-fit.ts over the SciPy L-BFGS-B port) against scikit-learn 1.2.1 /
 * SciPy 1.10 themselves (Debian's /usr/bin/python3, through
 * test/fixtures/sklearn-lbfgs/sklearn_iterates.py) on the fits of a golden set of the
 * `senteval-transfer-glove50` layout: the same X (ours is SentEval's bit for bit; the parity checks
 * its SHA-256), rows and C. Per fit it records both runs' iteration and evaluation counts, stopping
 * message and final objective, and, per iteration, the relative difference of the objective and of
 * ‖∇f‖∞; for final fits also SentEval's recorded n_iter and objective, and how many test
 * predictions differ between ours and sklearn's coefficients.
 *
 * Fits: every golden `final` fit (one per outer fold for MR/CR/SUBJ/MPQA, one for SST2/TREC/MRPC)
 * and, with --kfold-folds, the k-fold fits (every C) of those folds of TREC/MRPC on the golden's
 * folds. Writes bench/results/lbfgs-iterates-<time>.json. Not a test.
 *
 *   npx tsx bench/lbfgs-iterates.ts [--golden <dir>] [--data <dir>] [--tasks TREC,MRPC]
 *        [--kfold-folds 0,1] [--python /usr/bin/python3]
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { execFileSync, spawnSync } from 'node:child_process';
import { locateDataDir, locateGoldenDir } from '../lib/config.js';
import { readWordVectors } from '../lib/eval/transfer/bow.js';
import { bowBatcher, embedTask } from '../lib/eval/transfer/embed-task.js';
import { predictLogistic, thetaFrom } from '../lib/eval/transfer/logistic-regression.js';
import { gather, gatherRows, type Matrix } from '../lib/eval/transfer/matrix.js';
import { fitLogisticRegressionSklearn } from '../lib/eval/transfer/sklearn-lbfgs-fit.js';
import { prepareTransferTask } from '../lib/eval/transfer/tasks.js';
import { portablePath } from '../lib/report/training-record.js';
import { writeFileAtomic } from '../lib/util/atomic-write.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
type Json = Record<string, any>;

const { values: opts } = parseArgs({
  options: {
    golden: { type: 'string' },
    data: { type: 'string' },
    tasks: { type: 'string' },
    'kfold-folds': { type: 'string', default: '' },
    python: { type: 'string', default: '/usr/bin/python3' },
  },
});

function findGoldenSet(): string {
  const g = locateGoldenDir(opts.golden);
  if (!g) throw new Error('no golden folder: pass --golden <dir> or set ANGLE_GOLDEN_DIR');
  for (const dir of [g.path, join(g.path, 'senteval-transfer-glove50')]) {
    try {
      if (JSON.parse(readFileSync(join(dir, 'golden.json'), 'utf8')).format === 'senteval-transfer-golden/1') return dir;
    } catch {
      // not this one
    }
  }
  throw new Error(`${g.path}: no senteval-transfer-golden/1 golden.json there or in senteval-transfer-glove50/`);
}

interface Fit {
  task: string;
  label: string;
  C: number;
  x: Matrix;
  y: Int32Array;
  xTest?: Matrix;
  golden?: { nIter: number; objective: number };
}

function load1(): number {
  return Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
}

function maxRel(a: number[], b: number[], from = 0, to = a.length): number {
  let w = 0;
  for (let k = from; k < Math.min(to, a.length, b.length); k++) w = Math.max(w, Math.abs(a[k] - b[k]) / Math.abs(b[k]));
  return w;
}

async function main(): Promise<void> {
  const goldenDir = findGoldenSet();
  const data = locateDataDir(opts.data);
  if (!data) throw new Error('no data root: pass --data <dir> or set ANGLE_DATA_DIR');
  const g = JSON.parse(readFileSync(join(goldenDir, 'golden.json'), 'utf8')) as Json;
  const tasks = opts.tasks ? opts.tasks.split(',') : (g.meta.tasks as string[]);
  const kfoldFolds = opts['kfold-folds'] ? opts['kfold-folds'].split(',').map(Number) : [];
  const vec = g.meta.vectors as { file: string };
  const wv = readWordVectors(join(data.path, '..', 'models', 'glove-6B-50d-subset', vec.file));
  const fits: Fit[] = [];
  for (const task of tasks) {
    const rec = g.tasks[task] as Json;
    const m = await embedTask(prepareTransferTask(task, { dataDir: data.path }), bowBatcher(wv));
    const cv = rec.cv as Json;
    const golden = (f: Json) => ({ nIter: f.n_iter as number, objective: f.objective as number });
    if (cv.classifier === 'InnerKFoldClassifier') {
      const { x, y } = m.splits.all;
      (cv.folds as Json[]).forEach((f, i) => {
        const inTest = new Uint8Array(y.length);
        for (const r of f.test_idx as number[]) inTest[r] = 1;
        const train = Int32Array.from({ length: y.length }, (_, r) => r).filter((r) => !inTest[r]);
        fits.push({ task, label: `fold ${i} final`, C: f.final.C, x: gatherRows(x, train), y: gather(y, train), xTest: gatherRows(x, f.test_idx), golden: golden(f.final) });
      });
    } else {
      const { x, y } = m.splits.train;
      fits.push({ task, label: 'final', C: cv.final.C, x, y, xTest: m.splits.test.x, golden: golden(cv.final) });
      if (cv.classifier === 'KFoldClassifier') {
        for (const j of kfoldFolds) {
          const test = new Set(cv.folds_test_idx[j] as number[]);
          const train = Int32Array.from({ length: y.length }, (_, r) => r).filter((r) => !test.has(r));
          (cv.regs as number[]).forEach((C, r) => fits.push({ task, label: `fold ${j}`, C, x: gatherRows(x, train), y: gather(y, train), xTest: gatherRows(x, cv.folds_test_idx[j]), golden: { nIter: cv.fold_n_iter[r][j], objective: NaN } }));
        }
      }
    }
  }
  // sklearn's runs, in one Python process
  const work = mkdtempSync(join(tmpdir(), 'lbfgs-iterates-'));
  const load = { before: load1(), after: NaN };
  let sk: Json;
  const t0 = performance.now();
  try {
    const req = {
      fits: fits.map((f, i) => {
        const file = join(work, `x${i}.f64`);
        writeFileSync(file, Buffer.from(f.x.data.buffer, f.x.data.byteOffset, f.x.data.byteLength));
        return { x_file: file, rows: f.x.rows, cols: f.x.cols, y: Array.from(f.y), C: f.C };
      }),
    };
    const py = spawnSync(opts.python!, [join(root, 'test', 'fixtures', 'sklearn-lbfgs', 'sklearn_iterates.py')], { input: JSON.stringify(req), maxBuffer: 1 << 30, encoding: 'utf8' });
    if (py.status !== 0) throw new Error(`${opts.python} sklearn_iterates.py failed (${py.status}): ${py.stderr}`);
    sk = JSON.parse(py.stdout) as Json;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  const tSklearn = (performance.now() - t0) / 1000;
  const t1 = performance.now();
  const rows = fits.map((f, i) => {
    const s = sk.fits[i];
    const its: { f: number; pgNorm: number }[] = [];
    const ours = fitLogisticRegressionSklearn(f.x, f.y, f.C, { onIteration: (it) => its.push(it) });
    const of = its.map((it) => it.f);
    const sf = (s.iterations as Json[]).map((it) => it.f as number);
    const opg = its.map((it) => it.pgNorm);
    const spg = (s.iterations as Json[]).map((it) => it.pg as number);
    let predDiffer: number | undefined;
    if (f.xTest) {
      const a = predictLogistic(ours, f.xTest);
      const b = predictLogistic({ ...ours, theta: thetaFrom(s.coef, s.intercept) }, f.xTest);
      predDiffer = a.reduce((n, v, k) => n + (v !== b[k] ? 1 : 0), 0);
    }
    return {
      task: f.task,
      fit: f.label,
      C: f.C,
      rows: f.x.rows,
      parameters: ours.theta.length,
      ours: { nIter: ours.solver.iterations, nfev: ours.solver.evaluations, message: ours.solver.reason, objective: ours.objective },
      sklearn: { nIter: s.n_iter, nfev: s.nfev, message: s.message, objective: s.objective },
      golden: f.golden && { nIter: f.golden.nIter, ...(Number.isFinite(f.golden.objective) ? { objective: f.golden.objective, sklearnHereEqualsGolden: s.objective === f.golden.objective } : {}) },
      objectiveRelDiff: { first20: maxRel(of, sf, 0, 20), all: maxRel(of, sf), last: Math.abs(ours.objective - s.objective) / Math.abs(s.objective) },
      pgNormRelDiff: { first20: maxRel(opg, spg, 0, 20), last: Math.abs(opg[opg.length - 1] - spg[spg.length - 1]) / spg[spg.length - 1] },
      ...(predDiffer !== undefined ? { testRows: f.xTest!.rows, testPredictionsDiffering: predDiffer } : {}),
    };
  });
  const tOurs = (performance.now() - t1) / 1000;
  load.after = load1();
  const sameCounts = rows.filter((r) => r.ours.nIter === r.sklearn.nIter && r.ours.nfev === r.sklearn.nfev && r.ours.message === r.sklearn.message).length;
  const summary = {
    fits: rows.length,
    sameIterationsEvaluationsAndMessage: sameCounts,
    atCap: rows.filter((r) => r.sklearn.nIter >= 100).length,
    worstObjectiveRelDiffFirst20: Math.max(...rows.map((r) => r.objectiveRelDiff.first20)),
    worstObjectiveRelDiffLast: Math.max(...rows.map((r) => r.objectiveRelDiff.last)),
    worstObjectiveRelDiffAny: Math.max(...rows.map((r) => r.objectiveRelDiff.all)),
    testPredictionsDiffering: rows.reduce((n, r) => n + (r.testPredictionsDiffering ?? 0), 0),
    testPredictions: rows.reduce((n, r) => n + (r.testRows ?? 0), 0),
    seconds: { sklearn: tSklearn, ours: tOurs },
  };
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['-C', root, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  } catch {
    // not a checkout
  }
  const record = {
    benchmark: 'lbfgs-iterates',
    date: new Date().toISOString(),
    commit,
    golden: portablePath(goldenDir),
    seed: g.meta.seed,
    machine: { cpus: cpus().length, load1: load },
    versions: { node: process.version, ...sk.versions },
    method:
      'per fit: scikit-learn LogisticRegression(C).fit (lbfgs, max_iter 100, tol 1e-4) in /usr/bin/python3 with a callback recording f and ‖∇f‖∞ after every ' +
      'iteration, against fitLogisticRegressionSklearn on the same X (SentEval’s, bit for bit), rows and C; relative differences per iteration',
    summary,
    fits: rows,
  };
  mkdirSync(join(here, 'results'), { recursive: true });
  const out = join(here, 'results', `lbfgs-iterates-${record.date.replace(/[:.]/g, '-')}.json`);
  await writeFileAtomic(out, `${JSON.stringify(record, null, 1)}\n`);
  console.log(JSON.stringify(summary));
  for (const r of rows)
    console.log(
      `${r.task} ${r.fit} C=${r.C}: iterations ${r.ours.nIter}/${r.sklearn.nIter}, nfev ${r.ours.nfev}/${r.sklearn.nfev}, objective rel diff first 20 ${r.objectiveRelDiff.first20.toExponential(1)}, ` +
        `worst ${r.objectiveRelDiff.all.toExponential(1)}, last ${r.objectiveRelDiff.last.toExponential(1)}${r.testRows ? `, test predictions differing ${r.testPredictionsDiffering}/${r.testRows}` : ''}`,
    );
  console.log(`wrote ${out}`);
}

main().catch((e) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
