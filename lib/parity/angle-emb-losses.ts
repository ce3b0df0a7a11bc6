/**
 * Parity of the objectives with a golden set of angle_emb 0.6.1's own training code (layout
 * `angle-emb-losses-golden-v1`, shared/golden/angle-emb-0.6-losses/README.md): golden.json's `cases`
 * and golden.safetensors's tensors. Every case is computed here in float32 on the active backend from
 * its stored inputs and compared with the float64 reference under the set's own float32 tolerances
 * (`|got − want| <= abs + rel · scale`; scale |loss|, or max |want| of a tensor).
 *
 * | kind                             | computed by                                                        |
 * |----------------------------------|--------------------------------------------------------------------|
 * | `cosine_loss`, `angle_loss`      | cosineLoss, angleLoss (lib/losses)                                 |
 * | `in_batch_negative_loss`         | inBatchNegativesLoss, positives 'angle-int' (the library's int cast); `negative_weights` never changes the value (README §3) |
 * | `contrastive_with_negative_loss` | contrastiveWithNegativeLoss, gradients of text, pos, neg           |
 * | `AngleLoss`                      | format A angleLossTerms, B contrastiveWithNegativeLoss(x[0::2], x[1::2]) at ibn_tau, C angleTripletLossTerms |
 * | `distillation_loss`              | distillationLoss                                                   |
 * | `mlm_loss`                       | maskedLmLoss                                                       |
 * | `pooling`                        | lib/embed/pooling's pool (cls, avg/mean, cls_avg, max, last), and get_pooling's cls_max, an index and `all` here |
 * | `trainer` (AngleTrainer)         | AngleLoss of the pooled last layer + teacher alignment (distillationLoss, mse 0, T 1) + MLM; gradient of every hidden state |
 * | `trainer` (AngleESETrainer)      | eseLoss with the stored PCA targets injected in call order (`pca_calls[].target`); the teacher term added as a value only |
 *
 * For every ESE call the project's own pcaCompress, started from the stored draw R, is compared with
 * the library's target by P·Pᵀ, which no column sign changes (the torch 1.13 algorithm for k < D, an
 * exact SVD for k = D). A case of an unknown kind, or one whose tensors are missing, is a failed check, so a set
 * cannot pass by omission.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tf } from '../backend/index.js';
import { registerGradients } from '../backend/gradients.js';
import { pool, type Pooling } from '../embed/pooling.js';
import { angleLoss, type AnglePooling } from '../losses/angle.js';
import { angleLossTerms, angleTripletLossTerms, type AngleLossConfigInput } from '../losses/angle-loss.js';
import { splitPairs } from '../losses/batch.js';
import { contrastiveWithNegativeLoss } from '../losses/contrastive-with-negative.js';
import { cosineLoss } from '../losses/cosine.js';
import { distillationLoss } from '../losses/distillation.js';
import { eseLoss } from '../losses/ese.js';
import { inBatchNegativesLoss } from '../losses/in-batch-negatives.js';
import { maskedLmLoss } from '../losses/masked-lm.js';
import { pcaCompress } from '../losses/pca-compress.js';
import { readSafetensors, type TensorEntry } from '../models/safetensors.js';
import { InputError } from '../util/errors.js';
import type { ParityCheck } from './check.js';

export const ANGLE_EMB_LOSSES_FORMAT = 'angle-emb-losses-golden-v1';

/**
 * The project's own pca_compress against the library's target, compared by P·Pᵀ (sign- and
 * degenerate-rotation-invariant, as the set's README advises): the inputs reach us in float32.
 */
const PCA_GRAM_TOLERANCE = 1e-4;

interface Tol {
  abs: number;
  rel: number;
}
interface Tolerances {
  loss: Tol;
  grad: Tol;
  pooling: Tol;
}

type Json = Record<string, unknown>;
interface Case extends Json {
  name: string;
  kind: string;
  options?: Json;
  resolved_options?: Json;
  inputs: Record<string, string>;
  loss?: { f64: number; f32: number };
  grads?: Record<string, { f64: string; f32: string }>;
  outputs?: { f64: string; f32: string };
  layer?: number;
  pca_calls?: Array<{ call: number; k: number; m: string; target: string; R: string; torch_svd_lowrank_branch?: string }>;
}

/** Whether golden.json's head is of this layout. */
export function isAngleEmbLossesHead(head: Json): boolean {
  return typeof head.format === 'string' && head.format.startsWith('angle-emb-losses-golden-');
}

class Tensors {
  constructor(
    private readonly t: Map<string, TensorEntry>,
    private readonly file: string,
  ) {}
  get(name: string): TensorEntry {
    const e = this.t.get(name);
    if (!e) throw new InputError(`tensor '${name}' is missing`, { file: this.file });
    return e;
  }
  tensor(name: string): tf.Tensor {
    const e = this.get(name);
    return tf.tensor(Float32Array.from(e.data), e.shape, 'float32');
  }
}

function within(name: string, got: ArrayLike<number>, want: ArrayLike<number>, tol: Tol, scaleOf: 'self' | number): ParityCheck {
  if (got.length !== want.length) return { name, ok: false, detail: `${got.length} values, the reference has ${want.length}` };
  let scale = 0;
  if (scaleOf === 'self') for (let i = 0; i < want.length; i++) scale = Math.max(scale, Math.abs(want[i]));
  else scale = scaleOf;
  let worst = 0;
  let excess = -Infinity;
  for (let i = 0; i < want.length; i++) {
    const d = Math.abs(got[i] - want[i]);
    if (!(d <= worst)) worst = Number.isNaN(d) ? Infinity : d;
    excess = Math.max(excess, Number.isNaN(d) ? Infinity : d - (tol.abs + tol.rel * scale));
  }
  const ok = excess <= 0;
  return { name, ok, detail: `max |diff| ${worst.toExponential(2)} (tol ${tol.abs.toExponential(0)} + ${tol.rel.toExponential(0)}·${scale.toExponential(2)})` };
}

/** AngleLoss's keyword arguments as this project's configuration (weights, taus, the library's int-cast positives). */
function angleConfig(kw: Json): AngleLossConfigInput {
  const num = (k: string) => Number(kw[k]);
  return {
    preset: 'code',
    weights: { cosine: num('cosine_w'), ibn: num('ibn_w'), cln: num('cln_w'), angle: num('angle_w') },
    taus: { cosine: num('cosine_tau'), ibn: num('ibn_tau'), angle: num('angle_tau') },
    anglePooling: String(kw.angle_pooling_strategy ?? 'sum') as AnglePooling,
    ibnPositives: 'angle-int',
    duplicates: 'ignore',
  };
}

/** One label per pair from the collator's per-row labels ([rows, 1], equal within a pair). */
function pairLabels(e: TensorEntry): number[] {
  return Array.from(e.data).filter((_, i) => i % 2 === 0);
}

/** angle_emb's `AngleLoss(labels, outputs)` for dataset format A, B or C. */
function angleLossOf(format: string, kw: Json, labels: readonly number[]): (x: tf.Tensor2D) => tf.Scalar {
  const cfg = angleConfig(kw);
  if (format === 'A') return (x) => angleLossTerms(x, labels, cfg, {}).total;
  if (format === 'B') {
    // Format B ignores every weight: one contrastive term at ibn_tau over (x[0::2], x[1::2]).
    return (x) => {
      const { first, second } = splitPairs(x, 'AngleLoss format B');
      return contrastiveWithNegativeLoss(first, second, undefined, { tau: Number(kw.ibn_tau) });
    };
  }
  if (format === 'C') return (x) => angleTripletLossTerms(x, cfg).total;
  throw new InputError(`AngleLoss: unknown dataset_format '${format}' (A, B or C)`);
}

/** get_pooling (utils.py:58-99) on h [B, T, D] with mask [B, T]. */
function poolLikeLibrary(strategy: unknown, h: tf.Tensor3D, mask: tf.Tensor2D, padSide: 'right' | 'left'): tf.Tensor {
  const ours: Record<string, Pooling> = { cls: 'cls', avg: 'avg', mean: 'avg', cls_avg: 'cls_avg', max: 'max', last: 'last' };
  if (typeof strategy === 'string' && ours[strategy]) return pool(ours[strategy], { lastHiddenState: h, attentionMask: mask, padSide });
  if (strategy === 'cls_max') return tf.div(tf.add(pool('cls', { lastHiddenState: h, attentionMask: mask, padSide }), pool('max', { lastHiddenState: h, attentionMask: mask, padSide })), 2);
  if (strategy === 'all') return h;
  const index = typeof strategy === 'number' ? strategy : typeof strategy === 'string' && /^-?[0-9]+$/.test(strategy) ? Number(strategy) : undefined;
  if (index !== undefined) {
    const [B, T, D] = h.shape;
    const t = index < 0 ? T + index : index;
    return tf.reshape(tf.slice(h, [0, t, 0], [B, 1, D]), [B, D]);
  }
  throw new InputError(`pooling strategy ${JSON.stringify(strategy)} is not one of get_pooling's`);
}

/** Hidden state i of the stacked [L+1, B, T, D] tensor. */
function layerOf(stack: tf.Tensor, i: number): tf.Tensor3D {
  const [, B, T, D] = stack.shape;
  return tf.reshape(tf.slice(stack, [i, 0, 0, 0], [1, B, T, D]), [B, T, D]);
}

/**
 * ‖P Pᵀ − Q Qᵀ‖_F / ‖Q Qᵀ‖_F for two [rows, k] matrices: zero when P's columns are Q's up to sign, and
 * up to a rotation inside a block of equal singular values, where the vectors themselves are arbitrary.
 */
function gramRelativeDiff(p: ArrayLike<number>, q: ArrayLike<number>, rows: number, k: number): number {
  let diff = 0;
  let norm = 0;
  for (let a = 0; a < rows; a++) {
    for (let b = 0; b < rows; b++) {
      let gp = 0;
      let gq = 0;
      for (let j = 0; j < k; j++) {
        gp += p[a * k + j] * p[b * k + j];
        gq += q[a * k + j] * q[b * k + j];
      }
      diff += (gp - gq) ** 2;
      norm += gq ** 2;
    }
  }
  return Math.sqrt(diff / Math.max(norm, 1e-300));
}

/** Loss value and gradients of `fn` with respect to the named inputs. */
function valueAndGrads(fn: (xs: tf.Tensor[]) => tf.Scalar, inputs: tf.Tensor[]): { value: number; grads: Float32Array[] } {
  const { value, grads } = tf.valueAndGrads((...xs: tf.Tensor[]) => fn(xs))(inputs);
  const out = { value: value.dataSync()[0], grads: grads.map((g) => g.dataSync() as Float32Array) };
  tf.dispose([value, ...grads]);
  return out;
}

function checkCase(c: Case, T: Tensors, tol: Tolerances): ParityCheck[] {
  const base = `angle-emb/${c.name}`;
  const opts = c.resolved_options ?? c.options ?? {};
  const inp = (arg: string) => {
    const name = c.inputs[arg];
    if (!name) throw new InputError(`case '${c.name}' has no input '${arg}'`);
    return name;
  };
  // The differentiated arguments, in the order the loss function takes them.
  let args: string[];
  let fn: (xs: tf.Tensor[]) => tf.Scalar;
  const extraChecks: ParityCheck[] = [];
  let constantTerm = 0;
  switch (c.kind) {
    case 'cosine_loss':
    case 'angle_loss':
    case 'in_batch_negative_loss': {
      args = ['y_pred'];
      const labels = pairLabels(T.get(inp('y_true')));
      const tau = Number(opts.tau);
      if (c.kind === 'cosine_loss') fn = ([x]) => cosineLoss(x as tf.Tensor2D, labels, { tau });
      else if (c.kind === 'angle_loss') fn = ([x]) => angleLoss(x as tf.Tensor2D, labels, { tau, pooling: String(opts.pooling_strategy ?? 'sum') as AnglePooling });
      else fn = ([x]) => inBatchNegativesLoss(x as tf.Tensor2D, labels, { tau, positives: 'angle-int', duplicates: 'ignore' });
      break;
    }
    case 'contrastive_with_negative_loss':
      args = c.inputs.neg ? ['text', 'pos', 'neg'] : ['text', 'pos'];
      fn = ([q, p, n]) => contrastiveWithNegativeLoss(q as tf.Tensor2D, p as tf.Tensor2D, n as tf.Tensor2D | undefined, { tau: Number(opts.tau) });
      break;
    case 'AngleLoss': {
      args = ['outputs'];
      const format = String(opts.dataset_format);
      const labelsEntry = T.get(inp('labels'));
      const labels = format === 'A' ? pairLabels(labelsEntry) : [];
      const loss = angleLossOf(format, opts, labels);
      fn = ([x]) => loss(x as tf.Tensor2D);
      break;
    }
    case 'distillation_loss': {
      args = ['inputs'];
      const target = T.tensor(inp('targets'));
      fn = ([x]) => distillationLoss(x, target, { mseWeight: Number(opts.mse_weight), klTemperature: Number(opts.kl_temperature) });
      break;
    }
    case 'mlm_loss': {
      args = ['logits'];
      const labels = T.get(inp('labels')).data;
      fn = ([x]) => maskedLmLoss(x as tf.Tensor3D, labels, Number(opts.pad_token_id ?? 0));
      break;
    }
    case 'pooling': {
      const o = c.options ?? {};
      const padSide = o.padding_side === 'left' ? 'left' : 'right';
      const stack = T.tensor(inp('outputs'));
      const mask = T.tensor(inp('attention_mask')) as tf.Tensor2D;
      const got = tf.tidy(() => poolLikeLibrary(o.pooling_strategy, layerOf(stack, c.layer ?? stack.shape[0] - 1), mask, padSide));
      const want = T.get(c.outputs!.f64).data;
      const r = within(`${base}/pooled`, got.dataSync(), want, tol.pooling, 0);
      tf.dispose([stack, mask, got]);
      return [r];
    }
    case 'trainer': {
      const o = c.options ?? {};
      const format = String((opts.loss_kwargs as Json).dataset_format);
      const padSide = o.padding_side === 'left' ? 'left' : 'right';
      const labelsEntry = T.get(inp('labels'));
      const labels = format === 'A' ? pairLabels(labelsEntry) : [];
      const loss = angleLossOf(format, opts.loss_kwargs as Json, labels);
      const mask = T.tensor(inp('attention_mask')) as tf.Tensor2D;
      const ese = o.trainer === 'AngleESETrainer';
      const mlm = c.inputs.mask_target_labels !== undefined;
      args = mlm ? ['hidden_states', 'mlm_logits'] : ['hidden_states'];
      const teacherName = c.inputs.teacher_last_hidden_state;
      const teacherStrategy = opts.teacher_pooling_strategy ?? 'cls';
      const teacher = teacherName ? tf.tidy(() => poolLikeLibrary(teacherStrategy, T.tensor(teacherName) as tf.Tensor3D, mask, padSide)) : undefined;
      const strategy = o.pooling_strategy;
      const studentOf = (h: tf.Tensor3D) => (teacherStrategy === 'all' ? h : poolLikeLibrary(strategy, h, mask, padSide));
      if (ese && teacher) {
        // AngleESETrainer adds the teacher term under no_grad: its value only.
        const stack = T.tensor(inp('hidden_states'));
        constantTerm = tf.tidy(() => distillationLoss(studentOf(layerOf(stack, stack.shape[0] - 1)), teacher, { mseWeight: 0, klTemperature: 1 }).dataSync()[0]);
        stack.dispose();
      }
      const targets = (c.pca_calls ?? []).map((p) => T.tensor(p.target) as tf.Tensor2D);
      if (ese) {
        for (const p of c.pca_calls ?? []) {
          const m = T.get(p.m);
          const [rows, dim] = m.shape;
          const want = T.get(p.target).data;
          let got: Float64Array;
          try {
            got = pcaCompress(m.data, rows, dim, p.k, { draw: T.get(p.R).data });
          } catch (e) {
            extraChecks.push({ name: `${base}/pca.${p.call}`, ok: false, detail: (e as Error).message });
            continue;
          }
          const d = gramRelativeDiff(got, want, rows, p.k);
          extraChecks.push({ name: `${base}/pca.${p.call}`, ok: d <= PCA_GRAM_TOLERANCE, detail: `own pca_compress (stored R) vs the library's target, P·Pᵀ relative Frobenius difference ${d.toExponential(2)} (tol ${PCA_GRAM_TOLERANCE.toExponential(0)})` });
        }
      }
      const kw = opts as Json;
      fn = ([stack, logits]) => {
        const L = stack.shape[0] - 1;
        const last = poolLikeLibrary(strategy, layerOf(stack, L), mask, padSide) as tf.Tensor2D;
        let total: tf.Scalar;
        if (ese) {
          const layers = Array.from({ length: L + 1 }, (_, i) => (i === L ? last : (poolLikeLibrary(strategy, layerOf(stack, i), mask, padSide) as tf.Tensor2D)));
          total = eseLoss(layers, loss, { compressionSize: Number(kw.ese_compression_size), klTemperature: Number(kw.ese_kl_temperature), pca: kw.apply_ese_pca !== false }, (call) => {
            if (!targets[call]) throw new InputError(`case '${c.name}': no stored PCA target for call ${call}`);
            return targets[call];
          }).total;
        } else {
          total = loss(last);
          if (teacher) total = tf.add(total, distillationLoss(studentOf(layerOf(stack, L)), teacher, { mseWeight: 0, klTemperature: 1 }));
        }
        if (logits) total = tf.add(total, maskedLmLoss(logits as tf.Tensor3D, T.get(inp('mask_target_labels')).data, Number(kw.pad_token_id ?? 0)));
        return total;
      };
      break;
    }
    default:
      return [{ name: base, ok: false, detail: `unknown case kind '${c.kind}' (add it to lib/parity/angle-emb-losses.ts)` }];
  }
  if (!c.loss || !c.grads) return [{ name: base, ok: false, detail: 'case lacks a loss or grads' }];
  const inputs = args.map((a) => T.tensor(inp(a)));
  let out: { value: number; grads: Float32Array[] };
  try {
    out = valueAndGrads(fn, inputs);
  } catch (e) {
    return [{ name: base, ok: false, detail: `computing the loss failed: ${(e as Error).message}` }];
  } finally {
    tf.dispose(inputs);
  }
  const checks = [within(`${base}/value`, [out.value + constantTerm], [c.loss.f64], tol.loss, Math.abs(c.loss.f64))];
  args.forEach((a, i) => {
    const g = c.grads![a];
    if (!g) checks.push({ name: `${base}/grad.${a}`, ok: false, detail: `the reference has no gradient of '${a}'` });
    else checks.push(within(`${base}/grad.${a}`, out.grads[i], T.get(g.f64).data, tol.grad, 'self'));
  });
  return [...checks, ...extraChecks];
}

/**
 * Checks every case of `<goldenDir>/golden.json` + golden.safetensors. Throws InputError when a file
 * is missing or unreadable; everything else is reported as checks. Starts no backend.
 */
export async function checkAngleEmbLossesGolden(goldenDir: string): Promise<ParityCheck[]> {
  const jsonPath = join(goldenDir, 'golden.json');
  let head: Json;
  try {
    head = JSON.parse(readFileSync(jsonPath, 'utf8')) as Json;
  } catch (e) {
    throw new InputError(`cannot read the golden losses: ${(e as Error).message}`, { file: jsonPath });
  }
  if (!isAngleEmbLossesHead(head)) throw new InputError(`format ${JSON.stringify(head.format)} is not ${ANGLE_EMB_LOSSES_FORMAT}`, { file: jsonPath });
  const stPath = join(goldenDir, 'golden.safetensors');
  const T = new Tensors(readSafetensors(stPath).tensors, stPath);
  const t = (head.tolerances ?? {}) as Json;
  const f32 = (t.float32_port ?? {}) as Record<string, Tol>;
  const tol: Tolerances = {
    loss: f32.loss ?? { abs: 1e-5, rel: 1e-4 },
    grad: f32.grad ?? { abs: 1e-6, rel: 1e-4 },
    pooling: (t.pooling as Tol) ?? { abs: 1e-5, rel: 0 },
  };
  registerGradients();
  const cases = head.cases;
  if (!Array.isArray(cases) || cases.length === 0) return [{ name: 'angle-emb/cases', ok: false, detail: `${jsonPath} has no cases` }];
  const checks: ParityCheck[] = [];
  for (const raw of cases as Case[]) {
    // One scope per case frees every tensor it made (tf.tidy cannot return the checks).
    tf.engine().startScope();
    try {
      checks.push(...checkCase(raw, T, tol));
    } catch (e) {
      checks.push({ name: `angle-emb/${raw?.name ?? '?'}`, ok: false, detail: (e as Error).message });
    } finally {
      tf.engine().endScope();
    }
  }
  return checks;
}
