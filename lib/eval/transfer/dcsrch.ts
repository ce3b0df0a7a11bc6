/**
 * The Moré–Thuente line search as MINPACK-2's `dcsrch`/`dcstep` define it, in the copy SciPy's
 * L-BFGS-B (scipy/optimize/lbfgsb_src/lbfgsb.f, SciPy 1.10) carries; read, not copied. It finds a
 * step stp > 0 along a descent direction with
 *
 *   f(stp) ≤ f(0) + ftol·stp·f'(0)          (sufficient decrease)
 *   |f'(stp)| ≤ gtol·|f'(0)|                 (curvature)
 *
 * keeping an interval [stx, sty] that brackets a minimiser once one is found, choosing the next
 * trial by the safeguarded cubic / quadratic / secant steps of `dcstep`, and switching to the
 * modified function ψ(stp) = f(stp) − f(0) − ftol·stp·f'(0) until a step with ψ ≤ 0 and f' ≥ 0
 * is seen (stage 1 → 2). References: J. J. Moré, D. J. Thuente, "Line search algorithms with
 * guaranteed sufficient decrease", ACM TOMS 20 (1994) 286–307.
 *
 * The reverse-communication interface is kept: `start` then, after each evaluation the caller
 * makes at `stp`, `next(f, g)` until the task is 'CONVERGENCE' or a 'WARNING'. Every arithmetic
 * expression follows the Fortran's order of operations, so the trial steps are the same doubles.
 */

export type DcsrchTask = 'FG' | 'CONVERGENCE' | 'WARNING: ROUNDING ERRORS PREVENT PROGRESS' | 'WARNING: XTOL TEST SATISFIED' | 'WARNING: STP = STPMAX' | 'WARNING: STP = STPMIN';

export interface DcsrchParams {
  ftol: number;
  gtol: number;
  xtol: number;
  stpmin: number;
  stpmax: number;
}

const XTRAPL = 1.1;
const XTRAPU = 4.0;
const P5 = 0.5;
const P66 = 0.66;

export class Dcsrch {
  /** The step at which the caller evaluates next (task 'FG'), or the accepted step. */
  stp: number;
  task: DcsrchTask = 'FG';
  private brackt = false;
  private stage = 1;
  private readonly finit: number;
  private readonly ginit: number;
  private readonly gtest: number;
  private gx: number;
  private gy: number;
  private fx: number;
  private fy: number;
  private stx = 0;
  private sty = 0;
  private stmin = 0;
  private stmax: number;
  private width: number;
  private width1: number;

  /**
   * task = 'START': f and g are the function and its derivative at step 0 (g < 0), stp the first
   * trial step. Invalid input throws (the Fortran returns 'ERROR: …').
   */
  constructor(
    f: number,
    g: number,
    stp: number,
    private readonly p: DcsrchParams,
  ) {
    if (stp < p.stpmin) throw new RangeError('dcsrch: STP .LT. STPMIN');
    if (stp > p.stpmax) throw new RangeError('dcsrch: STP .GT. STPMAX');
    if (g >= 0) throw new RangeError('dcsrch: INITIAL G .GE. ZERO');
    if (p.ftol < 0 || p.gtol < 0 || p.xtol < 0 || p.stpmin < 0 || p.stpmax < p.stpmin) throw new RangeError('dcsrch: invalid tolerances or step bounds');
    this.stp = stp;
    this.finit = f;
    this.ginit = g;
    this.gtest = p.ftol * g;
    this.width = p.stpmax - p.stpmin;
    this.width1 = this.width / P5;
    this.fx = f;
    this.gx = g;
    this.fy = f;
    this.gy = g;
    this.stmax = stp + XTRAPU * stp;
  }

  /** f and g (the directional derivative) at the current stp; sets task and, for 'FG', the next stp. */
  next(f: number, g: number): DcsrchTask {
    const { gtol, xtol, stpmin, stpmax } = this.p;
    let stp = this.stp;
    const ftest = this.finit + stp * this.gtest;
    if (this.stage === 1 && f <= ftest && g >= 0) this.stage = 2;
    let task: DcsrchTask = 'FG';
    if (this.brackt && (stp <= this.stmin || stp >= this.stmax)) task = 'WARNING: ROUNDING ERRORS PREVENT PROGRESS';
    if (this.brackt && this.stmax - this.stmin <= xtol * this.stmax) task = 'WARNING: XTOL TEST SATISFIED';
    if (stp === stpmax && f <= ftest && g <= this.gtest) task = 'WARNING: STP = STPMAX';
    if (stp === stpmin && (f > ftest || g >= this.gtest)) task = 'WARNING: STP = STPMIN';
    if (f <= ftest && Math.abs(g) <= gtol * -this.ginit) task = 'CONVERGENCE';
    if (task !== 'FG') {
      this.task = task;
      return task;
    }
    if (this.stage === 1 && f <= this.fx && f > ftest) {
      // the modified function ψ: its values and derivatives at the three points
      const gtest = this.gtest;
      const s: StepState = {
        stx: this.stx,
        fx: this.fx - this.stx * gtest,
        dx: this.gx - gtest,
        sty: this.sty,
        fy: this.fy - this.sty * gtest,
        dy: this.gy - gtest,
        stp,
        brackt: this.brackt,
      };
      dcstep(s, f - stp * gtest, g - gtest, this.stmin, this.stmax);
      this.stx = s.stx;
      this.sty = s.sty;
      this.fx = s.fx + s.stx * gtest;
      this.fy = s.fy + s.sty * gtest;
      this.gx = s.dx + gtest;
      this.gy = s.dy + gtest;
      this.brackt = s.brackt;
      stp = s.stp;
    } else {
      const s: StepState = { stx: this.stx, fx: this.fx, dx: this.gx, sty: this.sty, fy: this.fy, dy: this.gy, stp, brackt: this.brackt };
      dcstep(s, f, g, this.stmin, this.stmax);
      this.stx = s.stx;
      this.fx = s.fx;
      this.gx = s.dx;
      this.sty = s.sty;
      this.fy = s.fy;
      this.gy = s.dy;
      this.brackt = s.brackt;
      stp = s.stp;
    }
    // bisect when the interval did not shrink enough
    if (this.brackt) {
      if (Math.abs(this.sty - this.stx) >= P66 * this.width1) stp = this.stx + P5 * (this.sty - this.stx);
      this.width1 = this.width;
      this.width = Math.abs(this.sty - this.stx);
    }
    if (this.brackt) {
      this.stmin = Math.min(this.stx, this.sty);
      this.stmax = Math.max(this.stx, this.sty);
    } else {
      this.stmin = stp + XTRAPL * (stp - this.stx);
      this.stmax = stp + XTRAPU * (stp - this.stx);
    }
    stp = Math.max(stp, stpmin);
    stp = Math.min(stp, stpmax);
    if ((this.brackt && (stp <= this.stmin || stp >= this.stmax)) || (this.brackt && this.stmax - this.stmin <= xtol * this.stmax)) stp = this.stx;
    this.stp = stp;
    this.task = 'FG';
    return 'FG';
  }
}

/** Fortran's x**2 (an integer power: one multiplication). */
const sq = (x: number) => x * x;

interface StepState {
  stx: number;
  fx: number;
  dx: number;
  sty: number;
  fy: number;
  dy: number;
  stp: number;
  brackt: boolean;
}

/**
 * MINPACK-2's dcstep: a safeguarded step from the best point (stx, fx, dx), the other end of the
 * interval (sty, fy, dy) and the trial (stp, fp, dp); updates the interval and sets s.stp.
 * Fortran's max/min with two arguments are Math.max/min here (no NaN reaches them).
 */
function dcstep(s: StepState, fp: number, dp: number, stpmin: number, stpmax: number): void {
  const { stx, fx, dx, sty, fy, dy, stp } = s;
  const sgnd = dp * (dx / Math.abs(dx));
  let stpf: number;
  if (fp > fx) {
    // a higher function value: the minimum is bracketed
    const theta = (3 * (fx - fp)) / (stp - stx) + dx + dp;
    const sm = Math.max(Math.abs(theta), Math.abs(dx), Math.abs(dp));
    let gamma = sm * Math.sqrt(sq(theta / sm) - (dx / sm) * (dp / sm));
    if (stp < stx) gamma = -gamma;
    const p = gamma - dx + theta;
    const q = gamma - dx + gamma + dp;
    const r = p / q;
    const stpc = stx + r * (stp - stx);
    const stpq = stx + (dx / ((fx - fp) / (stp - stx) + dx) / 2) * (stp - stx);
    stpf = Math.abs(stpc - stx) < Math.abs(stpq - stx) ? stpc : stpc + (stpq - stpc) / 2;
    s.brackt = true;
  } else if (sgnd < 0) {
    // a lower value and derivatives of opposite sign: bracketed
    const theta = (3 * (fx - fp)) / (stp - stx) + dx + dp;
    const sm = Math.max(Math.abs(theta), Math.abs(dx), Math.abs(dp));
    let gamma = sm * Math.sqrt(sq(theta / sm) - (dx / sm) * (dp / sm));
    if (stp > stx) gamma = -gamma;
    const p = gamma - dp + theta;
    const q = gamma - dp + gamma + dx;
    const r = p / q;
    const stpc = stp + r * (stx - stp);
    const stpq = stp + (dp / (dp - dx)) * (stx - stp);
    stpf = Math.abs(stpc - stp) > Math.abs(stpq - stp) ? stpc : stpq;
    s.brackt = true;
  } else if (Math.abs(dp) < Math.abs(dx)) {
    // a lower value, same sign, the derivative's magnitude decreases
    const theta = (3 * (fx - fp)) / (stp - stx) + dx + dp;
    const sm = Math.max(Math.abs(theta), Math.abs(dx), Math.abs(dp));
    let gamma = sm * Math.sqrt(Math.max(0, sq(theta / sm) - (dx / sm) * (dp / sm)));
    if (stp > stx) gamma = -gamma;
    const p = gamma - dp + theta;
    const q = gamma + (dx - dp) + gamma;
    const r = p / q;
    let stpc: number;
    if (r < 0 && gamma !== 0) stpc = stp + r * (stx - stp);
    else if (stp > stx) stpc = stpmax;
    else stpc = stpmin;
    const stpq = stp + (dp / (dp - dx)) * (stx - stp);
    if (s.brackt) {
      stpf = Math.abs(stpc - stp) < Math.abs(stpq - stp) ? stpc : stpq;
      stpf = stp > stx ? Math.min(stp + P66 * (sty - stp), stpf) : Math.max(stp + P66 * (sty - stp), stpf);
    } else {
      stpf = Math.abs(stpc - stp) > Math.abs(stpq - stp) ? stpc : stpq;
      stpf = Math.min(stpmax, stpf);
      stpf = Math.max(stpmin, stpf);
    }
  } else {
    // a lower value, same sign, the derivative's magnitude does not decrease
    if (s.brackt) {
      const theta = (3 * (fp - fy)) / (sty - stp) + dy + dp;
      const sm = Math.max(Math.abs(theta), Math.abs(dy), Math.abs(dp));
      let gamma = sm * Math.sqrt(sq(theta / sm) - (dy / sm) * (dp / sm));
      if (stp > sty) gamma = -gamma;
      const p = gamma - dp + theta;
      const q = gamma - dp + gamma + dy;
      const r = p / q;
      stpf = stp + r * (sty - stp);
    } else if (stp > stx) stpf = stpmax;
    else stpf = stpmin;
  }
  // update the interval
  if (fp > fx) {
    s.sty = stp;
    s.fy = fp;
    s.dy = dp;
  } else {
    if (sgnd < 0) {
      s.sty = stx;
      s.fy = fx;
      s.dy = dx;
    }
    s.stx = stp;
    s.fx = fp;
    s.dx = dp;
  }
  s.stp = stpf;
}
