/**
 * Progress for long work: `label  done/total  rate unit/s  ETA`. On a terminal it redraws one
 * line; elsewhere (notebooks, CI logs) it prints a line at most every `intervalMs`, so logs stay
 * readable.
 */
export interface ProgressOptions {
  label: string;
  total: number;
  unit?: string;
  intervalMs?: number;
  stream?: NodeJS.WriteStream;
  enabled?: boolean;
}

function fmtSeconds(s: number): string {
  if (!Number.isFinite(s)) return '?';
  if (s < 60) return `${s.toFixed(0)}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(Math.round(s % 60)).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.round((s % 3600) / 60)).padStart(2, '0')}m`;
}

export class Progress {
  private done = 0;
  private readonly start = Date.now();
  private lastPrint = 0;
  private readonly stream: NodeJS.WriteStream;
  private readonly tty: boolean;

  constructor(private readonly o: ProgressOptions) {
    this.stream = o.stream ?? process.stderr;
    this.tty = Boolean(this.stream.isTTY);
  }

  /** Adds `n` finished items and maybe prints. */
  tick(n = 1, extra = ''): void {
    this.done += n;
    if (this.o.enabled === false) return;
    const now = Date.now();
    const interval = this.o.intervalMs ?? (this.tty ? 200 : 10_000);
    if (now - this.lastPrint < interval && this.done < this.o.total) return;
    this.lastPrint = now;
    this.print(extra);
  }

  line(extra = ''): string {
    const elapsed = (Date.now() - this.start) / 1000;
    const rate = elapsed > 0 ? this.done / elapsed : 0;
    const eta = rate > 0 ? (this.o.total - this.done) / rate : Number.POSITIVE_INFINITY;
    const pct = this.o.total > 0 ? ((100 * this.done) / this.o.total).toFixed(0) : '100';
    return `${this.o.label} ${this.done}/${this.o.total} (${pct}%) ${rate.toFixed(1)} ${this.o.unit ?? 'it'}/s elapsed ${fmtSeconds(elapsed)} ETA ${fmtSeconds(eta)}${extra ? ' ' + extra : ''}`;
  }

  private print(extra: string): void {
    if (this.tty) this.stream.write(`\r${this.line(extra)}\x1b[K${this.done >= this.o.total ? '\n' : ''}`);
    else this.stream.write(this.line(extra) + '\n');
  }
}
