/**
 * SciPy 1.10's `minimize(fun, x0, method='L-BFGS-B', jac=True)` for a problem without bounds,
 * iteration for iteration: the driver `_minimize_lbfgsb` (scipy/optimize/_lbfgsb_py.py) around
 * L-BFGS-B 3.0 (scipy/optimize/lbfgsb_src/lbfgsb.f: Byrd, Lu, Nocedal, Zhu 1995, with Morales and
 * Nocedal's 2011 subspace-minimisation remark); read, not copied. This is the solver behind
 * scikit-learn's `LogisticRegression(solver='lbfgs')`, whose fits SentEval stops at max_iter 100:
 * matching those capped fits means taking the same steps, not reaching the same optimum.
 *
 * What runs when every variable is free (nbd = 0, as sklearn calls it):
 * - B_k = θI − W M Wᵀ, the compact limited-memory BFGS matrix (m pairs (s, y); θ = yᵀy/sᵀy of the
 *   newest pair, 1 after a reset).
 * - With no pairs (the first iteration, or after a reset) the generalised Cauchy point is
 *   x − g/θ·(−f1/f2) = x − g (θ = 1, no breakpoints); otherwise the GCP search is skipped
 *   (z = x) and the subspace step is the quasi-Newton step d = −B⁻¹g, formed as L-BFGS-B does:
 *   formk's LELᵀ factorisation of the 2col×2col middle matrix K and two triangular solves
 *   (subsm). The search direction is z − x.
 * - Line search `dcsrch` (dcsrch.ts) with ftol 1e-3, gtol 0.9, xtol 0.1, stpmax 1e10, first trial
 *   stp = 1/‖d‖ on iteration 0 and 1 after; at most `maxls` (20) evaluations, else the memory is
 *   reset (or, with no pairs, the run ends ABNORMAL_TERMINATION_IN_LNSRCH).
 * - Update: s = stp·d, y = g_new − g_old, sᵀy computed as stp·(g_newᵀd − g_oldᵀd); the pair is
 *   skipped when sᵀy ≤ ε·(−g_oldᵀd·stp); T = θSᵀS + L D⁻¹ Lᵀ is Cholesky-factored (formt),
 *   a failure resets the memory.
 * - Stopping, in SciPy's order after each accepted step (one "iteration"): the driver's
 *   `nit ≥ maxiter` (message 'STOP: TOTAL NO. of ITERATIONS REACHED LIMIT'), then
 *   `nfev > maxfun`, then the Fortran's ‖g‖∞ ≤ pgtol (= gtol) and
 *   (f_old − f) ≤ factr·ε·max(|f_old|, |f|, 1) with factr = ftol_option / ε.
 *
 * Floating point: every expression keeps the Fortran's order of operations; BLAS ddot, daxpy and
 * the LINPACK dpofa/dtrsl are left-to-right loops here, where SciPy's OpenBLAS may sum dot
 * products of more than a few dozen terms in another order, so iterates agree to rounding, not
 * bit for bit. SciPy's ScalarFunction evaluates f at x0 once before the loop and again only at
 * an x it has not just seen; `nfev` counts the same way.
 */

import { Dcsrch } from './dcsrch.js';

/** f(x), writing ∇f(x) into g. */
export type ObjectiveWithGradient = (x: Float64Array, g: Float64Array) => number;

export interface LbfgsbOptions {
  /** maxcor: the number of correction pairs kept (SciPy default 10). */
  maxcor?: number;
  /** ftol: the relative reduction of f that stops (SciPy default 2.2204460492503131e-09; factr = ftol / ε). */
  ftol?: number;
  /** gtol = pgtol: ‖g‖∞ that stops (SciPy default 1e-5; scikit-learn passes its tol, 1e-4). */
  gtol?: number;
  /** maxiter (SciPy default 15000; scikit-learn passes max_iter, 100). */
  maxiter?: number;
  /** maxfun (SciPy default 15000). */
  maxfun?: number;
  /** maxls: line-search evaluations per iteration (SciPy default 20). */
  maxls?: number;
  /** Called after every iteration (SciPy's callback point), with the new iterate. */
  onIteration?: (it: LbfgsbIteration) => void;
}

export interface LbfgsbIteration {
  /** Iterations done, 1-based (SciPy's nit after this one). */
  nit: number;
  x: Float64Array;
  f: number;
  g: Float64Array;
  /** ‖g‖∞ (the projected gradient's norm without bounds). */
  pgNorm: number;
  nfev: number;
  /** The accepted line-search step. */
  stp: number;
}

export interface LbfgsbResult {
  x: Float64Array;
  f: number;
  g: Float64Array;
  /** Iterations (SciPy's nit; scikit-learn's n_iter_ is min(nit, max_iter)). */
  nit: number;
  /** Function evaluations (SciPy's nfev). */
  nfev: number;
  /** 0 converged, 1 maxiter or maxfun reached, 2 stopped otherwise (SciPy's status). */
  status: 0 | 1 | 2;
  /** SciPy's message (the Fortran task string). */
  message: string;
  /** Updates skipped because sᵀy was not positive enough, and memory resets. */
  skipped: number;
  resets: number;
}

const EPS = 2.220446049250313e-16; // np.finfo(float).eps, and LAPACK's 2·dlamch('e')

/** Left-to-right dot product of a[ao …] and b[bo …] over n entries (BLAS ddot's order). */
function ddot(n: number, a: Float64Array, ao: number, b: Float64Array, bo: number): number {
  let s = 0;
  for (let i = 0; i < n; i++) s += a[ao + i] * b[bo + i];
  return s;
}

/**
 * LINPACK dpofa: Cholesky factor Rᵀ R of the n×n SPD matrix stored at column-major a[off + i + j·ld]
 * (upper triangle used and overwritten by R). Returns 0, or the order of the leading minor that
 * is not positive definite.
 */
function dpofa(a: Float64Array, off: number, ld: number, n: number): number {
  for (let j = 0; j < n; j++) {
    let s = 0;
    const cj = off + j * ld;
    for (let k = 0; k < j; k++) {
      const ck = off + k * ld;
      let t = a[cj + k] - ddot(k, a, ck, a, cj);
      t = t / a[ck + k];
      a[cj + k] = t;
      s = s + t * t;
    }
    s = a[cj + j] - s;
    if (s <= 0) return j + 1;
    a[cj + j] = Math.sqrt(s);
  }
  return 0;
}

/**
 * LINPACK dtrsl with an upper triangular T (column-major, leading dimension ld) on b[0..n):
 * job 11 solves Tᵀx = b, job 01 solves T x = b. Returns 0, or the index of a zero diagonal.
 */
function dtrslUpper(t: Float64Array, ld: number, n: number, b: Float64Array, transpose: boolean): number {
  for (let i = 0; i < n; i++) if (t[i + i * ld] === 0) return i + 1;
  if (transpose) {
    b[0] = b[0] / t[0];
    for (let j = 1; j < n; j++) {
      b[j] = b[j] - ddot(j, t, j * ld, b, 0);
      b[j] = b[j] / t[j + j * ld];
    }
  } else {
    b[n - 1] = b[n - 1] / t[n - 1 + (n - 1) * ld];
    for (let j = n - 2; j >= 0; j--) {
      const temp = -b[j + 1];
      const c = (j + 1) * ld;
      for (let i = 0; i <= j; i++) b[i] = b[i] + temp * t[c + i];
      b[j] = b[j] / t[j + j * ld];
    }
  }
  return 0;
}

/** The limited-memory matrix: S, Y in a ring of m columns, SᵀY, SᵀS, and the factors formt/formk make. */
class LbfgsMemory {
  readonly ws: Float64Array;
  readonly wy: Float64Array;
  /** m×m, column-major, in logical order (oldest pair first). */
  readonly sy: Float64Array;
  readonly ss: Float64Array;
  readonly wt: Float64Array;
  /** 2m×2m, column-major. */
  readonly wn: Float64Array;
  readonly wn1: Float64Array;
  col = 0;
  /** 1-based ring positions, as the Fortran's. */
  head = 1;
  itail = 0;
  theta = 1;
  iupdat = 0;
  updatd = false;

  constructor(
    readonly n: number,
    readonly m: number,
  ) {
    this.ws = new Float64Array(n * m);
    this.wy = new Float64Array(n * m);
    this.sy = new Float64Array(m * m);
    this.ss = new Float64Array(m * m);
    this.wt = new Float64Array(m * m);
    this.wn = new Float64Array(4 * m * m);
    this.wn1 = new Float64Array(4 * m * m);
  }

  reset(): void {
    this.col = 0;
    this.head = 1;
    this.theta = 1;
    this.iupdat = 0;
    this.updatd = false;
  }

  /** Column offset of ring slot p (1-based) in ws/wy. */
  private slot(p: number): number {
    return (p - 1) * this.n;
  }

  /** matupd: stores s = d, y = r as the newest pair, θ = rr/dr, and the new row of SᵀY and column of SᵀS. */
  update(d: Float64Array, r: Float64Array, rr: number, dr: number, stp: number, dtd: number): void {
    const { m, n, sy, ss } = this;
    if (this.iupdat <= m) {
      this.col = this.iupdat;
      this.itail = ((this.head + this.iupdat - 2) % m) + 1;
    } else {
      this.itail = (this.itail % m) + 1;
      this.head = (this.head % m) + 1;
    }
    const col = this.col;
    this.ws.set(d, this.slot(this.itail));
    this.wy.set(r, this.slot(this.itail));
    this.theta = rr / dr;
    if (this.iupdat > m) {
      // drop the oldest pair: shift SᵀS's upper and SᵀY's lower triangle up-left by one
      for (let j = 1; j <= col - 1; j++) {
        for (let t = 0; t < j; t++) ss[t + (j - 1) * m] = ss[1 + t + j * m];
        for (let t = 0; t < col - j; t++) sy[j - 1 + t + (j - 1) * m] = sy[j + t + j * m];
      }
    }
    let pointr = this.head;
    for (let j = 1; j <= col - 1; j++) {
      sy[col - 1 + (j - 1) * m] = ddot(n, d, 0, this.wy, this.slot(pointr));
      ss[j - 1 + (col - 1) * m] = ddot(n, this.ws, this.slot(pointr), d, 0);
      pointr = (pointr % m) + 1;
    }
    ss[col - 1 + (col - 1) * m] = stp === 1 ? dtd : stp * stp * dtd;
    sy[col - 1 + (col - 1) * m] = dr;
  }

  /** formt: T = θSᵀS + L D⁻¹ Lᵀ (upper half) into wt and its Cholesky factor; false if not positive definite. */
  formt(): boolean {
    const { m, col, theta, sy, ss, wt } = this;
    for (let j = 1; j <= col; j++) wt[(j - 1) * m] = theta * ss[(j - 1) * m];
    for (let i = 2; i <= col; i++) {
      for (let j = i; j <= col; j++) {
        const k1 = Math.min(i, j) - 1;
        let ddum = 0;
        for (let k = 1; k <= k1; k++) ddum = ddum + (sy[i - 1 + (k - 1) * m] * sy[j - 1 + (k - 1) * m]) / sy[k - 1 + (k - 1) * m];
        wt[i - 1 + (j - 1) * m] = ddum + theta * ss[i - 1 + (j - 1) * m];
      }
    }
    return dpofa(wt, 0, m, col) === 0;
  }

  /**
   * formk with every variable free (the set of free variables never changes, so the Fortran's
   * entering/leaving corrections add zeros): WN1 keeps YᵀY and R_z = upper(SᵀY) (its SᵀAAᵀS and
   * L_a blocks are zero); WN = [YᵀY/θ + D, R_zᵀ… ; …, 0] is factored as LELᵀ. False on a failed
   * Cholesky factorisation.
   */
  formk(): boolean {
    const { m, n, col, head, theta, wn, wn1, sy, ws, wy } = this;
    const m2 = 2 * m;
    const at = (i: number, j: number) => i - 1 + (j - 1) * m2; // 1-based (i, j) of a 2m×2m matrix
    if (this.updatd) {
      if (this.iupdat > m) {
        // shift the old part of WN1
        for (let jy = 1; jy <= m - 1; jy++) {
          const js = m + jy;
          for (let t = 0; t < m - jy; t++) wn1[at(jy + t, jy)] = wn1[at(jy + 1 + t, jy + 1)];
          for (let t = 0; t < m - jy; t++) wn1[at(js + t, js)] = wn1[at(js + 1 + t, js + 1)];
          for (let t = 0; t < m - 1; t++) wn1[at(m + 1 + t, jy)] = wn1[at(m + 2 + t, jy + 1)];
        }
      }
      // new rows of blocks (1,1), (2,1) and (2,2)
      const iy = col;
      const is = m + col;
      let ipntr = head + col - 1;
      if (ipntr > m) ipntr -= m;
      let jpntr = head;
      for (let jy = 1; jy <= col; jy++) {
        const js = m + jy;
        wn1[at(iy, jy)] = ddot(n, wy, (ipntr - 1) * n, wy, (jpntr - 1) * n);
        wn1[at(is, js)] = 0;
        wn1[at(is, jy)] = 0;
        jpntr = (jpntr % m) + 1;
      }
      // new column of block (2,1)
      jpntr = head + col - 1;
      if (jpntr > m) jpntr -= m;
      ipntr = head;
      for (let i = 1; i <= col; i++) {
        wn1[at(m + i, col)] = ddot(n, ws, (ipntr - 1) * n, wy, (jpntr - 1) * n);
        ipntr = (ipntr % m) + 1;
      }
    }
    // the upper triangle of WN = [D + YᵀY/θ, −L_aᵀ + R_z; …, θ SᵀAAᵀS]
    for (let iy = 1; iy <= col; iy++) {
      const is = col + iy;
      const is1 = m + iy;
      for (let jy = 1; jy <= iy; jy++) {
        const js = col + jy;
        const js1 = m + jy;
        wn[at(jy, iy)] = wn1[at(iy, jy)] / theta;
        wn[at(js, is)] = wn1[at(is1, js1)] * theta;
      }
      for (let jy = 1; jy <= iy - 1; jy++) wn[at(jy, is)] = -wn1[at(is1, jy)];
      for (let jy = iy; jy <= col; jy++) wn[at(jy, is)] = wn1[at(is1, jy)];
      wn[at(iy, iy)] = wn[at(iy, iy)] + sy[iy - 1 + (iy - 1) * m];
    }
    // LLᵀ of block (1,1), then L⁻¹(−L_aᵀ + R_z) in block (1,2), then block (2,2) and its factor
    if (dpofa(wn, 0, m2, col) !== 0) return false;
    const col2 = 2 * col;
    const colBuf = new Float64Array(col);
    for (let js = col + 1; js <= col2; js++) {
      const o = at(1, js);
      for (let i = 0; i < col; i++) colBuf[i] = wn[o + i];
      dtrslUpper(wn, m2, col, colBuf, true);
      for (let i = 0; i < col; i++) wn[o + i] = colBuf[i];
    }
    for (let is = col + 1; is <= col2; is++) {
      for (let js = is; js <= col2; js++) wn[at(is, js)] = wn[at(is, js)] + ddot(col, wn, at(1, is), wn, at(1, js));
    }
    return dpofa(wn, at(col + 1, col + 1), m2, col) === 0;
  }

  /**
   * subsm with every variable free: d ← −B⁻¹g given d = −g on entry, as
   * d = (1/θ)d + (1/θ²) Wᵀ… (Sherman–Morrison–Woodbury through K's factors). False when a
   * triangular system is singular.
   */
  subsm(d: Float64Array): boolean {
    const { m, n, col, head, theta, wn, ws, wy } = this;
    const m2 = 2 * m;
    const col2 = 2 * col;
    const wv = new Float64Array(col2);
    let pointr = head;
    for (let i = 1; i <= col; i++) {
      const o = (pointr - 1) * n;
      let temp1 = 0;
      let temp2 = 0;
      for (let j = 0; j < n; j++) {
        temp1 = temp1 + wy[o + j] * d[j];
        temp2 = temp2 + ws[o + j] * d[j];
      }
      wv[i - 1] = temp1;
      wv[col + i - 1] = theta * temp2;
      pointr = (pointr % m) + 1;
    }
    if (dtrslUpper(wn, m2, col2, wv, true) !== 0) return false;
    for (let i = 0; i < col; i++) wv[i] = -wv[i];
    if (dtrslUpper(wn, m2, col2, wv, false) !== 0) return false;
    pointr = head;
    for (let jy = 1; jy <= col; jy++) {
      const o = (pointr - 1) * n;
      const a = wv[jy - 1];
      const b = wv[col + jy - 1];
      for (let i = 0; i < n; i++) d[i] = d[i] + (wy[o + i] * a) / theta + ws[o + i] * b;
      pointr = (pointr % m) + 1;
    }
    const inv = 1 / theta;
    for (let i = 0; i < n; i++) d[i] = inv * d[i];
    return true;
  }
}

function infNorm(g: Float64Array): number {
  let s = 0;
  for (let i = 0; i < g.length; i++) {
    const a = Math.abs(g[i]);
    if (a > s) s = a;
  }
  return s;
}

/** Minimises fun from x0 exactly as SciPy 1.10's L-BFGS-B does without bounds (see the file comment). */
export function minimizeLbfgsb(fun: ObjectiveWithGradient, x0: ArrayLike<number>, o: LbfgsbOptions = {}): LbfgsbResult {
  const n = x0.length;
  const m = o.maxcor ?? 10;
  const ftol = o.ftol ?? 2.2204460492503131e-9;
  const pgtol = o.gtol ?? 1e-5;
  const maxiter = o.maxiter ?? 15000;
  const maxfun = o.maxfun ?? 15000;
  const maxls = o.maxls ?? 20;
  if (!(n > 0)) throw new RangeError('minimizeLbfgsb: x0 is empty');
  if (!(m > 0) || !(maxls > 0)) throw new RangeError('minimizeLbfgsb: maxcor and maxls must be positive');
  const factr = ftol / EPS;
  const tol = factr * EPS;

  const x = Float64Array.from(x0);
  const g = new Float64Array(n);
  // SciPy's ScalarFunction: evaluates at x0 on creation, later only at an x it has not just seen
  const lastX = new Float64Array(n);
  const lastG = new Float64Array(n);
  let lastF = NaN;
  let nfev = 0;
  const evaluate = (): number => {
    let same = nfev > 0;
    for (let i = 0; same && i < n; i++) same = x[i] === lastX[i];
    if (!same) {
      lastF = fun(Float64Array.from(x), lastG);
      lastX.set(x);
      nfev++;
    }
    g.set(lastG);
    return lastF;
  };
  let f = evaluate();

  const mem = new LbfgsMemory(n, m);
  const z = new Float64Array(n);
  const d = new Float64Array(n);
  const t = new Float64Array(n);
  const r = new Float64Array(n);
  let iter = 0;
  let nit = 0;
  let skipped = 0;
  let resets = 0;
  const done = (status: 0 | 1 | 2, message: string): LbfgsbResult => ({ x, f, g: Float64Array.from(g), nit, nfev, status, message, skipped, resets });
  const resetMemory = () => {
    mem.reset();
    resets++;
  };

  let sbgnrm = infNorm(g);
  if (sbgnrm <= pgtol) return done(0, 'CONVERGENCE: NORM_OF_PROJECTED_GRADIENT_<=_PGTOL');

  for (;;) {
    // the point z the step goes to: the Cauchy point x − g with no pairs, else x + (−B⁻¹g)
    if (mem.col === 0) {
      let f1 = 0;
      for (let i = 0; i < n; i++) {
        const neggi = -g[i];
        d[i] = neggi;
        f1 = f1 - neggi * neggi;
      }
      const f2 = -mem.theta * f1;
      let dtm = -f1 / f2;
      if (sbgnrm <= 0) dtm = 0;
      if (dtm <= 0) dtm = 0;
      const tsum = 0 + dtm;
      for (let i = 0; i < n; i++) z[i] = x[i] + tsum * d[i];
    } else {
      const wrk = mem.updatd;
      if (wrk && !mem.formk()) {
        resetMemory();
        continue;
      }
      for (let i = 0; i < n; i++) d[i] = -g[i];
      if (!mem.subsm(d)) {
        resetMemory();
        continue;
      }
      for (let i = 0; i < n; i++) z[i] = x[i] + d[i];
    }
    for (let i = 0; i < n; i++) d[i] = z[i] - x[i];

    // line search (lnsrlb)
    const dtd = ddot(n, d, 0, d, 0);
    const dnorm = Math.sqrt(dtd);
    const stpmx = 1e10;
    let stp = iter === 0 ? Math.min(1 / dnorm, stpmx) : 1;
    t.set(x);
    r.set(g);
    const fold = f;
    let gd = ddot(n, g, 0, d, 0);
    const gdold = gd;
    let lineFailed = false;
    if (gd >= 0) lineFailed = true; // an ascent direction: no line search possible (info = -4)
    else {
      const ls = new Dcsrch(f, gd, stp, { ftol: 1e-3, gtol: 0.9, xtol: 0.1, stpmin: 0, stpmax: stpmx });
      let ifun = 0;
      for (;;) {
        // ls.stp is the trial to evaluate (task 'FG')
        stp = ls.stp;
        ifun++;
        if (ifun - 1 >= maxls) {
          lineFailed = true;
          break;
        }
        if (stp === 1) x.set(z);
        else for (let i = 0; i < n; i++) x[i] = stp * d[i] + t[i];
        f = evaluate();
        gd = ddot(n, g, 0, d, 0);
        const task = ls.next(f, gd);
        if (task !== 'FG') {
          stp = ls.stp;
          break;
        }
      }
    }
    if (lineFailed) {
      x.set(t);
      g.set(r);
      f = fold;
      if (mem.col === 0) {
        iter++;
        return done(2, 'ABNORMAL_TERMINATION_IN_LNSRCH');
      }
      resetMemory();
      continue;
    }

    // a new iterate
    iter++;
    sbgnrm = infNorm(g);
    nit++;
    o.onIteration?.({ nit, x: Float64Array.from(x), f, g: Float64Array.from(g), pgNorm: sbgnrm, nfev, stp });
    if (nit >= maxiter) return done(1, 'STOP: TOTAL NO. of ITERATIONS REACHED LIMIT');
    if (nfev > maxfun) return done(1, 'STOP: TOTAL NO. of f AND g EVALUATIONS EXCEEDS LIMIT');
    if (sbgnrm <= pgtol) return done(0, 'CONVERGENCE: NORM_OF_PROJECTED_GRADIENT_<=_PGTOL');
    const ddum0 = Math.max(Math.abs(fold), Math.abs(f), 1);
    if (fold - f <= tol * ddum0) return done(0, 'CONVERGENCE: REL_REDUCTION_OF_F_<=_FACTR*EPSMCH');

    // the new pair: s = stp·d, y = g − g_old
    for (let i = 0; i < n; i++) r[i] = g[i] - r[i];
    const rr = ddot(n, r, 0, r, 0);
    let dr: number;
    let ddum: number;
    if (stp === 1) {
      dr = gd - gdold;
      ddum = -gdold;
    } else {
      dr = (gd - gdold) * stp;
      for (let i = 0; i < n; i++) d[i] = stp * d[i];
      ddum = -gdold * stp;
    }
    if (dr <= EPS * ddum) {
      skipped++;
      mem.updatd = false;
      continue;
    }
    mem.updatd = true;
    mem.iupdat++;
    mem.update(d, r, rr, dr, stp, dtd);
    if (!mem.formt()) resetMemory();
  }
}
