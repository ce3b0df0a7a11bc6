/**
 * Which of the paper's orderings do our numbers reproduce? A paper table ranks its rows (AnglE
 * Table 4: all > w/o ibn > w/o angle > …; cls > cls-last-avg > …); a reproduction may get every
 * number a little off and still reproduce the ranking — or reverse a sub-point gap that its test
 * set cannot resolve anyway.
 *
 * For pairs of cells of a side-by-side (./side-by-side.ts) in the same group and column, ordered
 * by the paper's values (better = higher: the tables here print correlations and accuracies), each
 * pair says whether our difference has the paper's sign, and whether it is resolved:
 * - one run on each side, both with predictions sidecars on the same test pairs: the paired
 *   bootstrap and permutation tests of ./run-comparison.ts;
 * - several seeds on each side: the exact two-sample permutation test over the seeds'
 *   values (./statistics/seed-permutation.ts; 3 vs 3 seeds can never reach p < 0.05, and the
 *   reason says so);
 * - anything else (a side not run, one run against several, no sidecar): undetermined, with why.
 *
 * Pairs: 'adjacent' (default; each row against the next one down in the paper's order, which is
 * what reproducing the ranking takes), 'all', or an explicit list of [better, worse] rows.
 */
import { STAND_IN_WORDS, standInModels, verdictWords } from './stand-in.js';
import { InputError } from '../util/errors.js';
import { looseName } from '../paper/lookup.js';
import type { SimpleTable, TableValue } from '../util/table.js';
import { signed } from './format-numbers.js';
import { compareRuns, type CompareRunsOptions } from './run-comparison.js';
import { oursValue, type SideBySide, type SideBySideCell } from './side-by-side.js';
import { seedPermutationTest } from './statistics/seed-permutation.js';
import { differenceVerdict } from './statistics/verdict.js';

/** A cell of the side-by-side by row (and group, column where needed). */
export interface CellRef {
  row: string;
  group?: string;
  column?: string;
}

export interface OrderingOptions extends Pick<CompareRunsOptions, 'resamples' | 'permutations' | 'seed' | 'level'> {
  pairs?: 'adjacent' | 'all' | readonly (readonly [better: CellRef, worse: CellRef])[];
}

export type NoiseVerdict = 'resolved' | 'within noise' | 'undetermined';

export interface OrderingCheck {
  group?: string;
  column: string;
  /** The row the paper prints higher. */
  better: string;
  worse: string;
  paperDifference: number;
  /** ours(better) − ours(worse), when both are measured. */
  oursDifference?: number;
  /** Whether our difference has the paper's sign (undefined when a side is not measured). */
  reproduced?: boolean;
  verdict: NoiseVerdict;
  /** Our order against the paper's. */
  ordering: 'reproduced' | 'reversed' | 'tied' | 'not run' | 'paper ties';
  /** Which test decided, and its numbers; or why none could. */
  reason: string;
  /** The ordering and the noise verdict in a few words, e.g. "reproduced, within noise" (with ./stand-in.ts's words on a stand-in model). */
  summary: string;
  /** Whether a side's run is a stand-in model (./stand-in.ts): the verdict then reproduces nothing. */
  standIn?: boolean;
}

function refMatches(c: SideBySideCell, r: CellRef): boolean {
  return (
    looseName(c.row) === looseName(r.row) &&
    (r.group === undefined || looseName(c.group ?? '') === looseName(r.group)) &&
    (r.column === undefined || looseName(c.column) === looseName(r.column))
  );
}

function findCell(s: SideBySide, r: CellRef): SideBySideCell {
  const hits = s.cells.filter((c) => refMatches(c, r));
  if (hits.length === 0) throw new InputError(`ordering: no cell of the side-by-side matches row '${r.row}'${r.group ? ` in group '${r.group}'` : ''}${r.column ? `, column '${r.column}'` : ''} (cells: ${s.cells.map((c) => `${c.group ? `${c.group} / ` : ''}${c.row} · ${c.column}`).join('; ')})`);
  if (hits.length > 1) throw new InputError(`ordering: row '${r.row}' matches ${hits.length} cells; give its group and column`);
  return hits[0]!;
}

/** The pairs to check: [better, worse] by the paper's values. */
function pairsOf(s: SideBySide, how: OrderingOptions['pairs']): [SideBySideCell, SideBySideCell][] {
  if (Array.isArray(how)) {
    return how.map(([b, w]) => {
      const [cb, cw] = [findCell(s, b), findCell(s, w)];
      if (!cb.paper || !cw.paper) throw new InputError(`ordering: '${(cb.paper ? cw : cb).row}' has no paper number to order by`);
      return [cb, cw];
    });
  }
  const groups = new Map<string, SideBySideCell[]>();
  for (const c of s.cells) {
    if (!c.paper) continue;
    const k = `${c.group ?? ''}\u0000${c.column}`;
    groups.set(k, [...(groups.get(k) ?? []), c]);
  }
  const out: [SideBySideCell, SideBySideCell][] = [];
  for (const cells of groups.values()) {
    const sorted = [...cells].sort((a, b) => b.paper!.value - a.paper!.value);
    for (let i = 0; i < sorted.length; i++) {
      const until = how === 'all' ? sorted.length : Math.min(i + 2, sorted.length);
      for (let j = i + 1; j < until; j++) out.push([sorted[i]!, sorted[j]!]);
    }
  }
  return out;
}

function noise(better: SideBySideCell, worse: SideBySideCell, o: OrderingOptions): { verdict: NoiseVerdict; reason: string } {
  const [ob, ow] = [better.ours!, worse.ours!];
  const level = o.level ?? 0.95;
  if (ob.kind === 'single' && ow.kind === 'single') {
    const [rb, rw] = [better.runs[0]!, worse.runs[0]!];
    if (!rb.predictions || !rw.predictions) return { verdict: 'undetermined', reason: 'one run each, but not both have a predictions sidecar for a paired test' };
    const c = compareRuns(rb, rw, { ...o, labelA: better.row, labelB: worse.row });
    return { verdict: c.verdict.verdict, reason: `paired bootstrap + permutation over ${c.n} test pairs: ${c.verdict.reason} (ρ, not × 100)` };
  }
  if (ob.kind === 'seeds' && ow.kind === 'seeds') {
    const t = seedPermutationTest(ob.values, ow.values);
    const v = differenceVerdict({ difference: t.difference, pValue: t.pValue }, { level });
    const floor = t.minimumPValue >= 1 - level ? `; ${t.nA} vs ${t.nB} seeds cannot reach p < ${(1 - level).toFixed(2)} (smallest p ${t.minimumPValue.toFixed(3)}): more seeds are needed to resolve any difference` : '';
    return { verdict: v.verdict, reason: `exact permutation test over seeds (${t.splits} splits): ${v.reason}${floor}` };
  }
  return { verdict: 'undetermined', reason: `${ob.kind === 'seeds' ? `${ob.n} seeds` : 'one run'} against ${ow.kind === 'seeds' ? `${ow.n} seeds` : 'one run'}: no test compares these` };
}

export function orderingVerdicts(s: SideBySide, options: OrderingOptions = {}): OrderingCheck[] {
  return pairsOf(s, options.pairs ?? 'adjacent').map(([better, worse]) => {
    const paperDifference = better.paper!.value - worse.paper!.value;
    const base = { ...(better.group !== undefined ? { group: better.group } : {}), column: better.column, better: better.row, worse: worse.row, paperDifference };
    if (paperDifference === 0) {
      return { ...base, ordering: 'paper ties' as const, verdict: 'undetermined' as const, reason: 'the paper prints the same value for both: no ordering to reproduce', summary: 'paper ties' };
    }
    if (!better.ours || !worse.ours) {
      const missing = [better, worse].filter((c) => !c.ours).map((c) => `${c.row}: ${c.status}`);
      return { ...base, ordering: 'not run' as const, verdict: 'undetermined' as const, reason: missing.join('; '), summary: 'not run' };
    }
    const oursDifference = oursValue(better.ours) - oursValue(worse.ours);
    const reproduced = oursDifference > 0;
    const n = noise(better, worse, options);
    const ordering = reproduced ? ('reproduced' as const) : oursDifference === 0 ? ('tied' as const) : ('reversed' as const);
    const runs = [...better.runs, ...worse.runs];
    const summary = verdictWords(`${ordering}${n.verdict === 'within noise' ? ', within noise' : n.verdict === 'undetermined' ? ' (noise undetermined)' : ', resolved'}`, runs);
    return { ...base, oursDifference, reproduced, ordering, verdict: n.verdict, reason: n.reason, summary, ...(standInModels(runs).length ? { standIn: true } : {}) };
  });
}

/** The checks as a table: better, worse, Δ paper, Δ ours, ordering, noise; reasons as hover text. */
export function orderingTable(checks: readonly OrderingCheck[], options: { caption?: string; digits?: number; level?: number } = {}): SimpleTable {
  const d = options.digits ?? 2;
  const hasGroups = checks.some((c) => c.group !== undefined);
  const manyColumns = new Set(checks.map((c) => c.column)).size > 1;
  const columns = [...(hasGroups ? ['group'] : []), ...(manyColumns ? ['column'] : []), 'paper: higher', 'than', 'Δ paper', 'Δ ours', 'ordering', 'noise'];
  const rows: TableValue[][] = checks.map((c) => [
    ...(hasGroups ? [c.group ?? ''] : []),
    ...(manyColumns ? [c.column] : []),
    c.better,
    c.worse,
    signed(c.paperDifference, d),
    c.oursDifference === undefined ? '' : signed(c.oursDifference, d),
    c.standIn ? `${c.ordering} (${STAND_IN_WORDS})` : c.ordering,
    c.verdict,
  ]);
  const titles = checks.map((c) => [...(hasGroups ? [''] : []), ...(manyColumns ? [''] : []), '', '', '', '', '', c.reason]);
  const reproduced = checks.filter((c) => c.reproduced === true).length;
  const measured = checks.filter((c) => c.reproduced !== undefined).length;
  return {
    caption: options.caption ?? "The paper's orderings in our numbers",
    columns,
    rows,
    notes: [
      `${checks.some((c) => c.standIn) ? `On stand-in models, reproducing nothing: ` : ''}${reproduced} of ${measured} measured orderings reproduced; noise: resolved / within noise at ${Math.round((options.level ?? 0.95) * 100)}% (hover for the test and its numbers), undetermined where no test applies.`,
    ],
    titles,
  };
}
