/**
 * Preconditioned L-BFGS for smooth convex objectives, run to convergence (deterministic).
 *
 * Direction: the two-loop recursion (Nocedal & Wright, Numerical Optimization, Alg. 7.4) with the
 * initial inverse Hessian H₀ = γ P⁻¹ instead of γ I, P an SPD approximation of the Hessian that the
 * caller can solve with cheaply, γ = sᵀy / (yᵀP⁻¹y) from the newest pair. On the transfer tasks' ill-
 * conditioned logistic regressions (averaged word vectors have strongly correlated dimensions)
 * P = a Gram-matrix approximation of the Hessian takes the conditioning out, and L-BFGS only has to
 * learn the per-row curvature weights: tens of gradient evaluations instead of the hundreds plain
 * L-BFGS needs (scikit-learn's lbfgs stops at its 100-iteration cap in most of SentEval's fits).
 *
 * Step: backtracking (halving) from 1 under the Armijo condition; a pair is kept only if
 * sᵀy > 0. An optional projection keeps iterates in a subspace (the multinomial model's
 * intercepts are defined up to a common constant; we keep their sum at 0).
 *
 * Convergence: the predicted decrease δ = −gᵀd / 2 (≈ f − f* when the model is good, d the
 * search direction) below `tol` · max(1, |f|). Near the optimum f is only known to a few ulp of
 * its size, so when no step can decrease f any more the run also ends, converged if δ is
 * below `floorTol` · max(1, |f|).
 */

export interface LbfgsObjective {
  /** Number of parameters. */
  n: number;
  /** f(θ); writes ∇f(θ) into grad. */
  evaluate(theta: Float64Array, grad: Float64Array): number;
  /** out = P⁻¹ v for the SPD preconditioner P ≈ ∇²f (default: identity). */
  precondition?(v: Float64Array, out: Float64Array): void;
  /** Projects a direction onto the subspace the iterates live in, in place. */
  project?(v: Float64Array): void;
}

export interface LbfgsOptions {
  /** Number of correction pairs kept (default 10). */
  memory?: number;
  /** Relative predicted decrease at which to stop (default 1e-12). */
  tol?: number;
  /** Relative predicted decrease accepted as converged when f cannot decrease further (default 1e-9). */
  floorTol?: number;
  /** Iteration cap (default 1000). */
  maxIter?: number;
}

export interface LbfgsResult {
  theta: Float64Array;
  f: number;
  grad: Float64Array;
  iterations: number;
  /** Objective/gradient evaluations. */
  evaluations: number;
  converged: boolean;
  /** The last predicted decrease −gᵀd/2. */
  decrement: number;
  /** Why the run ended. */
  reason: 'decrement' | 'no-decrease' | 'max-iter';
}

function dot(a: Float64Array, b: Float64Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

export function minimizeLbfgs(obj: LbfgsObjective, theta0: Float64Array, o: LbfgsOptions = {}): LbfgsResult {
  const n = obj.n;
  const m = o.memory ?? 10;
  const tol = o.tol ?? 1e-12;
  const floorTol = o.floorTol ?? 1e-9;
  const maxIter = o.maxIter ?? 1000;
  const theta = Float64Array.from(theta0);
  const grad = new Float64Array(n);
  let f = obj.evaluate(theta, grad);
  let evaluations = 1;
  const S: Float64Array[] = [];
  const Y: Float64Array[] = [];
  const rho: number[] = [];
  const alpha = new Float64Array(m);
  const q = new Float64Array(n);
  const r = new Float64Array(n);
  const trial = new Float64Array(n);
  const gTrial = new Float64Array(n);
  const pv = new Float64Array(n);
  let decrement = Infinity;
  let reason: LbfgsResult['reason'] = 'max-iter';
  let iter = 0;
  for (; iter < maxIter; iter++) {
    // two-loop recursion: r = H g
    q.set(grad);
    for (let k = S.length - 1; k >= 0; k--) {
      const a = rho[k] * dot(S[k], q);
      alpha[k] = a;
      const yk = Y[k];
      for (let i = 0; i < n; i++) q[i] -= a * yk[i];
    }
    if (obj.precondition) obj.precondition(q, r);
    else r.set(q);
    if (S.length > 0) {
      const yl = Y[Y.length - 1];
      if (obj.precondition) obj.precondition(yl, pv);
      else pv.set(yl);
      const gamma = 1 / (rho[rho.length - 1] * dot(yl, pv));
      for (let i = 0; i < n; i++) r[i] *= gamma;
    }
    for (let k = 0; k < S.length; k++) {
      const b = rho[k] * dot(Y[k], r);
      const sk = S[k];
      const c = alpha[k] - b;
      for (let i = 0; i < n; i++) r[i] += c * sk[i];
    }
    if (obj.project) obj.project(r);
    // direction d = -r
    const gd = -dot(grad, r);
    decrement = -gd / 2;
    const scale = Math.max(1, Math.abs(f));
    if (!(gd < 0)) {
      // not a descent direction (rounding at the optimum, or a bad pair): restart once from P⁻¹g
      if (S.length > 0) {
        S.length = 0;
        Y.length = 0;
        rho.length = 0;
        iter--;
        continue;
      }
      reason = 'no-decrease';
      decrement = Math.max(0, decrement);
      break;
    }
    if (decrement <= tol * scale) {
      reason = 'decrement';
      break;
    }
    let step = 1;
    let fTrial = NaN;
    let accepted = false;
    for (let ls = 0; ls < 40; ls++) {
      for (let i = 0; i < n; i++) trial[i] = theta[i] - step * r[i];
      fTrial = obj.evaluate(trial, gTrial);
      evaluations++;
      if (fTrial <= f + 1e-4 * step * gd) {
        accepted = true;
        break;
      }
      step *= 0.5;
    }
    if (!accepted || !(fTrial < f)) {
      reason = 'no-decrease';
      break;
    }
    const s = new Float64Array(n);
    const y = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      s[i] = trial[i] - theta[i];
      y[i] = gTrial[i] - grad[i];
    }
    const sy = dot(s, y);
    theta.set(trial);
    grad.set(gTrial);
    f = fTrial;
    if (sy > 0) {
      if (S.length === m) {
        S.shift();
        Y.shift();
        rho.shift();
      }
      S.push(s);
      Y.push(y);
      rho.push(1 / sy);
    }
  }
  const scale = Math.max(1, Math.abs(f));
  const converged = reason === 'decrement' || (reason === 'no-decrease' && decrement <= floorTol * scale);
  return { theta, f, grad, iterations: iter, evaluations, converged, decrement, reason };
}
