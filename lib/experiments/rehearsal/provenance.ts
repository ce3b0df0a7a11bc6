/**
 * Where a rehearsal row came from: the commit (and whether the tree had uncommitted changes), the
 * package versions that computed it, the date and the machine. A projection is only as good as
 * the code that made it, and rows of one summary are written by different notebooks at different
 * times (./summary.ts), so each row carries its own.
 */
import { collectProvenance } from '../../report/provenance.js';

export interface RehearsalProvenance {
  /** Full commit hash, or 'unknown (not a git checkout)'. */
  commit: string;
  /** Uncommitted changes to tracked files when the row was written. */
  dirty: boolean | 'unknown';
  /** ISO 8601 time the row was written. */
  date: string;
  /** CPU model × cores, memory, OS: the machine that ran the rehearsal (not the GPU it projects onto). */
  machine: string;
  /** The backend active when the row was written, and its device. */
  backend: string;
  /** node and the project's numeric packages, name → version. */
  packages: Record<string, string>;
}

/** The provenance of rows written now. */
export function rehearsalProvenance(now: Date = new Date()): RehearsalProvenance {
  const p = collectProvenance();
  return {
    commit: p.gitCommit,
    dirty: p.gitDirty,
    date: now.toISOString(),
    machine: `${p.cpu}, ${p.memoryGiB} GiB, ${p.platform}`,
    backend: `${p.backend} (${p.device})`,
    packages: { node: p.node, ...p.packages },
  };
}

/** One line per distinct commit and machine among `rows`' provenance, for summary.md. */
export function provenanceLines(rows: ReadonlyArray<{ provenance?: RehearsalProvenance }>): string[] {
  const seen = new Map<string, { first: string; last: string; n: number }>();
  let missing = 0;
  for (const r of rows) {
    const p = r.provenance;
    if (!p) {
      missing++;
      continue;
    }
    const key = `commit ${p.commit.slice(0, 12)}${p.dirty === true ? ' (with uncommitted changes)' : ''} on ${p.machine}, tfjs-core ${p.packages['@tensorflow/tfjs-core'] ?? '?'}, node ${p.packages.node ?? '?'}`;
    const e = seen.get(key);
    if (!e) seen.set(key, { first: p.date, last: p.date, n: 1 });
    else {
      e.n++;
      if (p.date < e.first) e.first = p.date;
      if (p.date > e.last) e.last = p.date;
    }
  }
  const lines = [...seen].map(([k, e]) => `${e.n} row(s): ${k}, ${e.first.slice(0, 16)}Z${e.last !== e.first ? ` to ${e.last.slice(0, 16)}Z` : ''}`);
  if (missing) lines.push(`${missing} row(s) without provenance (written before rows recorded it)`);
  return lines;
}
