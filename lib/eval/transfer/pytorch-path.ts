/**
 * SentEval's PyTorch path (params.usepytorch = True, the setting the SimCSE, PromptEOL and AnglE
 * papers report), with `classifier = {nhid: 0, ...}`: a linear layer trained by mini-batch
 * gradient descent with early stopping (senteval/tools/classifier.py, PyTorchClassifier and MLP
 * at 5d6dc11; read, not copied). Plain typed arrays: 50–1000 inputs and ≤ 6 outputs are far too
 * small for a device to pay off.
 *
 * What SentEval does, and we do:
 * - A classifier is built per fit with `seed`: numpy's global RNG and torch's are re-seeded, so
 *   every fit is reproducible on its own. nn.Linear(d, nclasses) is initialised by torch's CPU
 *   generator (MT19937 seeded with `seed`; weight then bias, row-major; each value
 *   (u32 & 0xFFFFFF) / 2^24 · 2a − a with a = 1/√d, torch's kaiming-uniform bound for Linear).
 *   Binary tasks get two outputs and a softmax, not one sigmoid.
 * - Loss: CrossEntropyLoss averaged over the batch (SentEval sets `size_average = False` after
 *   construction, which torch ≥ 0.4.1 ignores: the loss is the mean). L2 through the optimiser's
 *   weight_decay = reg on weight and bias (grad += reg · param), reg ∈ {1e-5, 1e-4, 1e-3, 1e-2}.
 * - Optimiser: Adam (torch defaults lr 1e-3, betas 0.9/0.999, eps 1e-8, bias-corrected) or RMSprop
 *   (lr 1e-2, alpha 0.99, eps 1e-8), as SimCSE's `test` and `fasttest` settings choose.
 * - Validation: validation_data (the inner/k-fold held-out fold itself, or SST2's dev) or
 *   validation_split 0.05 (the refits): `perm = np.random.permutation(n)`, the first
 *   int(0.05·n) of perm are the dev rows, the rest train.
 * - Training: one "epoch" call = `epoch_size` passes; each pass draws `np.random.permutation(n)`
 *   and steps through it in batches of `batch_size` (last batch smaller). After each call, dev
 *   accuracy (argmax; ties to the first class); a strictly better accuracy keeps a copy of the
 *   model; otherwise, with early stopping, training ends once `tenacity` earlier non-improvements
 *   have been counted. The counter is never reset by an improvement (SentEval's code: the
 *   (tenacity+1)-th non-improving evaluation overall stops it). The loop runs while
 *   nepoch ≤ max_epoch (nepoch += epoch_size per call); the best model is returned.
 * - X goes to float32 (`torch.from_numpy(X).to(float32)`); parameters and optimiser state are
 *   float32 here too (each operation in double, rounded to float32 when stored). torch on a GPU
 *   sums in another order, so fits agree with SentEval's in behaviour, not bit for bit.
 */
import { InputError } from '../../util/errors.js';
import type { Matrix } from './matrix.js';
import { RandomState } from './random-state.js';
import type { ValidationProtocol } from './tasks.js';
import type { FitContext, FittedClassifier, TrainingRows, TransferLearner, ValidationSpec } from './validation.js';

export interface SentevalClassifierConfig {
  /** Hidden units; 0 = logistic regression (the only setting the papers use, and the only one here). */
  nhid: number;
  optim: 'adam' | 'rmsprop';
  batchSize: number;
  tenacity: number;
  epochSize: number;
  maxEpoch: number;
}

/** SimCSE's evaluation setting for the transfer tasks (`--mode test`), with SentEval's max_epoch default. */
export const SIMCSE_TEST_CLASSIFIER: SentevalClassifierConfig = { nhid: 0, optim: 'adam', batchSize: 64, tenacity: 5, epochSize: 4, maxEpoch: 200 };
/** SimCSE's `--mode dev/fasttest` setting (and SentEval's bow.py example). */
export const SIMCSE_FASTTEST_CLASSIFIER: SentevalClassifierConfig = { nhid: 0, optim: 'rmsprop', batchSize: 128, tenacity: 3, epochSize: 2, maxEpoch: 200 };

/** SentEval's l2reg grid on the PyTorch path (all protocols): 10^-5 … 10^-2. */
export function pytorchRegs(_protocol?: ValidationProtocol): number[] {
  return [1e-5, 1e-4, 1e-3, 1e-2];
}

/** torch's CPU generator as nn.Linear's init uses it: MT19937(seed), floats from the low 24 bits. */
export class TorchCpuUniform {
  private readonly mt: RandomState;
  constructor(seed: number) {
    // torch.manual_seed seeds its mt19937 with init_genrand, the same seeding as numpy's integer path
    this.mt = new RandomState(seed);
  }
  /** `tensor.uniform_(from, to)` for one float32 element. */
  uniform(from: number, to: number): number {
    const f = Math.fround;
    const [lo, hi] = [f(from), f(to)]; // static_cast<float>(from/to)
    const x = (this.mt.nextUint32() & 0xffffff) / 16777216; // exact in float32
    return f(f(x * f(hi - lo)) + lo);
  }
}

export interface LinearModel {
  /** nClasses × dim, row-major (torch's weight). */
  weight: Float32Array;
  bias: Float32Array;
  dim: number;
  nClasses: number;
}

/** nn.Linear(dim, nClasses) right after torch.manual_seed(seed). */
export function initLinear(dim: number, nClasses: number, seed: number): LinearModel {
  const g = new TorchCpuUniform(seed);
  // kaiming_uniform_(weight, a=√5): gain = √(2 / (1 + a²)), bound = √3 · gain / √fan_in (in double, as Python)
  const a = Math.sqrt(5);
  const bound = Math.sqrt(3) * (Math.sqrt(2 / (1 + a * a)) / Math.sqrt(dim));
  const weight = new Float32Array(nClasses * dim);
  for (let i = 0; i < weight.length; i++) weight[i] = g.uniform(-bound, bound);
  const bb = 1 / Math.sqrt(dim);
  const bias = new Float32Array(nClasses);
  for (let i = 0; i < nClasses; i++) bias[i] = g.uniform(-bb, bb);
  return { weight, bias, dim, nClasses };
}

/** argmax of the model's logits per row (first maximum). */
export function predictLinear(m: LinearModel, x: Float32Array, rows: number): Int32Array {
  const out = new Int32Array(rows);
  const { dim: d, nClasses: K } = m;
  for (let i = 0; i < rows; i++) {
    let best = 0;
    let bestV = -Infinity;
    for (let c = 0; c < K; c++) {
      let s = 0;
      for (let k = 0; k < d; k++) s += m.weight[c * d + k] * x[i * d + k];
      const v = Math.fround(s + m.bias[c]);
      if (v > bestV) {
        bestV = v;
        best = c;
      }
    }
    out[i] = best;
  }
  return out;
}

function accuracyOf(m: LinearModel, x: Float32Array, y: Int32Array): number {
  const pred = predictLinear(m, x, y.length);
  let c = 0;
  for (let i = 0; i < y.length; i++) if (pred[i] === y[i]) c++;
  return c / y.length;
}

export interface LinearFitResult {
  model: LinearModel;
  /** Best dev accuracy (what SentEval's fit returns). */
  bestAccuracy: number;
  /** Epochs run (multiples of epoch_size). */
  epochs: number;
  /** Dev accuracy after every epoch_size passes. */
  devHistory: number[];
  stoppedEarly: boolean;
}

export interface LinearFitInput {
  x: Float32Array;
  y: Int32Array;
  rows: number;
  dim: number;
  nClasses: number;
  l2reg: number;
  seed: number;
  validation: { kind: 'data'; x: Float32Array; y: Int32Array } | { kind: 'split'; fraction: number };
  config: SentevalClassifierConfig;
}

function take(x: Float32Array, y: Int32Array, d: number, idx: Int32Array): { x: Float32Array; y: Int32Array } {
  const ox = new Float32Array(idx.length * d);
  const oy = new Int32Array(idx.length);
  for (let i = 0; i < idx.length; i++) {
    ox.set(x.subarray(idx[i] * d, (idx[i] + 1) * d), i * d);
    oy[i] = y[idx[i]];
  }
  return { x: ox, y: oy };
}

/** MLP(nhid=0).fit(X, y, validation_data | validation_split) as SentEval runs it. */
export function fitSentevalLinear(inp: LinearFitInput): LinearFitResult {
  const { dim: d, nClasses: K, config: cfg, l2reg } = inp;
  if (cfg.nhid !== 0) throw new InputError(`SentEval classifier nhid=${cfg.nhid}: only nhid=0 (logistic regression, the papers' setting) is implemented`);
  // PyTorchClassifier.__init__: np.random.seed(seed), torch.manual_seed(seed); then the Linear layer
  const np = new RandomState(inp.seed);
  const model = initLinear(d, K, inp.seed);
  let trX: Float32Array;
  let trY: Int32Array;
  let devX: Float32Array;
  let devY: Int32Array;
  if (inp.validation.kind === 'data') {
    [trX, trY, devX, devY] = [inp.x, inp.y, inp.validation.x, inp.validation.y];
  } else {
    const perm = np.permutation(inp.rows);
    const nDev = Math.floor(inp.validation.fraction * inp.rows);
    ({ x: devX, y: devY } = take(inp.x, inp.y, d, perm.subarray(0, nDev)));
    ({ x: trX, y: trY } = take(inp.x, inp.y, d, perm.subarray(nDev)));
  }
  const n = trY.length;
  for (let i = 0; i < n; i++) if (!(trY[i] >= 0 && trY[i] < K)) throw new InputError(`label ${trY[i]} of training row ${i} is not a class index in [0, ${K})`);
  const P = K * d + K; // weight then bias, as model.parameters() lists them
  const param = new Float32Array(P);
  param.set(model.weight, 0);
  param.set(model.bias, K * d);
  const m1 = new Float32Array(P);
  const m2 = new Float32Array(P);
  const grad = new Float64Array(P);
  const logits = new Float64Array(K);
  let step = 0;
  const view: LinearModel = { weight: param.subarray(0, K * d), bias: param.subarray(K * d), dim: d, nClasses: K };
  const f = Math.fround;

  const optimiserStep = () => {
    step++;
    if (cfg.optim === 'adam') {
      const [lr, b1, b2, eps] = [1e-3, 0.9, 0.999, 1e-8];
      const bc1 = 1 - b1 ** step;
      const bc2 = 1 - b2 ** step;
      const stepSize = lr / bc1;
      const sqrtBc2 = Math.sqrt(bc2);
      for (let j = 0; j < P; j++) {
        const g = f(grad[j] + l2reg * param[j]);
        m1[j] = f(f(m1[j] * b1) + f(g * (1 - b1)));
        m2[j] = f(f(m2[j] * b2) + f(f(g * g) * (1 - b2)));
        const denom = f(f(Math.sqrt(m2[j]) / sqrtBc2) + eps);
        param[j] = f(param[j] - f(stepSize * f(m1[j] / denom)));
      }
    } else {
      const [lr, alpha, eps] = [1e-2, 0.99, 1e-8];
      for (let j = 0; j < P; j++) {
        const g = f(grad[j] + l2reg * param[j]);
        m2[j] = f(f(m2[j] * alpha) + f(f(g * g) * (1 - alpha)));
        const denom = f(Math.sqrt(m2[j]) + eps);
        param[j] = f(param[j] - f(lr * f(g / denom)));
      }
    }
  };

  const pass = () => {
    const perm = np.permutation(n);
    for (let start = 0; start < n; start += cfg.batchSize) {
      const end = Math.min(n, start + cfg.batchSize);
      const bs = end - start;
      grad.fill(0);
      for (let t = start; t < end; t++) {
        const i = perm[t];
        const xo = i * d;
        let zmax = -Infinity;
        for (let c = 0; c < K; c++) {
          const w = c * d;
          let s0 = 0;
          let s1 = 0;
          let k = 0;
          for (; k + 1 < d; k += 2) {
            s0 += param[w + k] * trX[xo + k];
            s1 += param[w + k + 1] * trX[xo + k + 1];
          }
          if (k < d) s0 += param[w + k] * trX[xo + k];
          logits[c] = f(s0 + s1 + param[K * d + c]);
          if (logits[c] > zmax) zmax = logits[c];
        }
        let sum = 0;
        for (let c = 0; c < K; c++) sum += logits[c] = Math.exp(logits[c] - zmax);
        for (let c = 0; c < K; c++) {
          // ∂(mean CE)/∂logit_c = (softmax_c − [c = y]) / batch size
          const r = (logits[c] / sum - (c === trY[i] ? 1 : 0)) / bs;
          const w = c * d;
          for (let k = 0; k < d; k++) grad[w + k] += r * trX[xo + k];
          grad[K * d + c] += r;
        }
      }
      optimiserStep();
    }
  };

  let nepoch = 0;
  let best = -1;
  let bestParam = Float32Array.from(param);
  let stop = false;
  let count = 0;
  let stoppedEarly = false;
  const devHistory: number[] = [];
  while (!stop && nepoch <= cfg.maxEpoch) {
    for (let e = 0; e < cfg.epochSize; e++) pass();
    nepoch += cfg.epochSize;
    const acc = accuracyOf(view, devX, devY);
    devHistory.push(acc);
    if (acc > best) {
      best = acc;
      bestParam = Float32Array.from(param);
    } else {
      if (count >= cfg.tenacity) {
        stop = true;
        stoppedEarly = true;
      }
      count++;
    }
  }
  return {
    model: { weight: bestParam.slice(0, K * d), bias: bestParam.slice(K * d), dim: d, nClasses: K },
    bestAccuracy: best,
    epochs: nepoch,
    devHistory,
    stoppedEarly,
  };
}

function toF32(m: Matrix): Float32Array {
  return Float32Array.from(m.data);
}

/**
 * SentEval's PyTorch path as a TransferLearner: one MLP(nhid=0) per reg, each seeded with
 * params.seed, trained on the rows with SentEval's validation argument.
 */
export function pytorchLinearLearner(config: SentevalClassifierConfig = SIMCSE_TEST_CLASSIFIER): TransferLearner {
  return {
    name: `pytorch-MLP-nhid${config.nhid}-${config.optim}-bs${config.batchSize} (tenacity ${config.tenacity}, epoch size ${config.epochSize})`,
    regs: pytorchRegs,
    async fitPath(train: TrainingRows, regs: readonly number[], validation: ValidationSpec, ctx: FitContext): Promise<FittedClassifier[]> {
      const x = toF32(train.x);
      const val: LinearFitInput['validation'] = validation.kind === 'data' ? { kind: 'data', x: toF32(validation.x), y: validation.y } : validation;
      return regs.map((reg) => {
        const r = fitSentevalLinear({ x, y: train.y, rows: train.x.rows, dim: train.x.cols, nClasses: ctx.nClasses, l2reg: reg, seed: ctx.seed, validation: val, config });
        return {
          reg,
          predict: (xm: Matrix) => predictLinear(r.model, toF32(xm), xm.rows),
          info: { epochs: r.epochs, bestDevAccuracy: r.bestAccuracy, stoppedEarly: r.stoppedEarly },
        };
      });
    },
  };
}
