/**
 * The embedding geometry of a list of models (AnglE Figure 5; SimACE Figures 3 and 6), as the
 * geometry notebook measures it: per model entry (./evaluation-models.ts), the cosine of every pair
 * of an STS set by gold bucket (lib/eval/geometry.ts), alignment and uniformity on a probe sample
 * (lib/eval/align-uniform-evaluator.ts) and the set's Spearman; then the spread of the cosines per
 * bucket as a table and the alignment/uniformity paths of trained runs. Models that cannot be
 * opened here (the Hub) are listed, not measured. The notebook's plan runs the measurements as
 * evaluation rows (./geometry-rows.ts).
 */
import type { StsSet } from '../data/sts.js';
import { cosineSpreadByGold, type CosineSpread } from '../eval/cosine-spread.js';
import type { Evaluator } from '../eval/evaluator.js';
import { cosineDensityForSet } from '../eval/geometry.js';
import { spearman } from '../eval/spearman.js';
import type { AlignUniformPath } from '../report/figures/align-uniform.js';
import type { SimpleTable } from '../util/table.js';
import { withModelEntry, type ModelEntry, type OpenModelOptions } from './evaluation-models.js';
import { rehearseEncoding } from './rehearsal/encode.js';
import type { RehearsalRow } from './rehearsal/summary.js';

export interface GeometryMeasurement {
  entry: ModelEntry;
  density: Awaited<ReturnType<typeof cosineDensityForSet>>;
  geometry: Record<string, number>;
  /** Spearman of the set's cosines against its gold scores. */
  spearman: number;
}

/** What decides an entry's measurement: the STS set whose pairs are bucketed, the probe, the buckets' edges. */
export interface GeometryMeasureOptions {
  set: StsSet;
  probe: Evaluator;
  goldEdges: readonly number[];
}

/** Measures one entry (its model open only meanwhile); undefined when the model cannot be opened here (the Hub). */
export async function measureEntryGeometry(entry: ModelEntry, o: GeometryMeasureOptions, open: OpenModelOptions = {}): Promise<GeometryMeasurement | undefined> {
  return withModelEntry(
    entry,
    async (m) => {
      if (!m.encoder) return undefined;
      const density = await cosineDensityForSet(m.encoder, o.set, { goldEdges: [...o.goldEdges], encode: { progress: false } });
      const geometry = (await o.probe.evaluate(m.encoder)).metrics;
      return { entry, density, geometry, spearman: spearman(density.cosines, density.goldScores) };
    },
    open,
  );
}

/** The rehearsal preset's stand-in for `measureEntryGeometry`: the entry's encoding of the set rehearsed at its real shapes (./rehearsal/encode.ts). */
export async function rehearseEntryGeometry(entry: ModelEntry, o: { set: StsSet; notebook: string; resultsDir: string }): Promise<RehearsalRow> {
  const texts = [...new Set(o.set.pairs.flatMap((p) => [p.a, p.b]))];
  return rehearseEncoding({ notebook: o.notebook, run: `${entry.label}: STS-B test cosines and the alignment/uniformity probe`, model: entry.model, texts, batchSize: 64, resultsDir: o.resultsDir });
}

/** 3 decimals, or 3 significant digits for small values (an untrained model's cosines crowd near 1). */
export function f3(v: number): string {
  return !Number.isFinite(v) ? '' : v !== 0 && Math.abs(v) < 0.01 ? v.toExponential(2) : v.toFixed(3);
}

/** Per model: the cosines' mean, standard deviation and IQR per gold bucket, the gap and separation of the extreme buckets. */
export function cosineSpreadTable(measured: readonly GeometryMeasurement[], goldEdges: readonly number[]): { table: SimpleTable; spreads: Array<{ entry: ModelEntry; spread: CosineSpread }> } {
  const spreads = measured.map((m) => ({ entry: m.entry, spread: cosineSpreadByGold(m.density.cosines, m.density.goldScores, [...goldEdges]) }));
  return {
    spreads,
    table: {
      caption: 'Cosine per gold bucket: mean, standard deviation, IQR (STS-B test)',
      columns: ['model', ...goldEdges.slice(0, -1).map((lo, b) => `gold ${lo}-${goldEdges[b + 1]}: mean / std / IQR`), 'gap (4-5 − 0-1)', 'separation'],
      rows: spreads.map(({ entry, spread: s }) => [entry.label, ...s.buckets.map((b) => `${f3(b.mean)} / ${f3(b.std)} / ${f3(b.iqr)} (n ${b.n})`), f3(s.gap), f3(s.separation)]),
    },
  };
}

/** The alignment/uniformity paths as a table: one row per run and dev evaluation. */
export function alignUniformPathTable(paths: readonly AlignUniformPath[]): SimpleTable {
  return {
    caption: 'The paths: alignment and uniformity at every dev evaluation',
    columns: ['run', 'step', 'alignment', 'uniformity'],
    rows: paths.flatMap((p) => p.points.map((q) => [p.name, q.step, q.alignment.toPrecision(4), q.uniformity.toPrecision(4)])),
  };
}

/** One line per path: where alignment and uniformity went over the run (lower is better for both). */
export function alignUniformPathSummary(paths: readonly AlignUniformPath[]): string {
  return paths
    .map((p) => {
      const a = p.points[0];
      const b = p.points.at(-1)!;
      return `${p.name}: alignment ${a.alignment.toPrecision(3)} → ${b.alignment.toPrecision(3)} (${b.alignment < a.alignment ? 'lower: better' : 'higher: worse'}), uniformity ${a.uniformity.toPrecision(3)} → ${b.uniformity.toPrecision(3)} (${b.uniformity < a.uniformity ? 'lower: better' : 'higher: worse'}) over ${b.step} steps`;
    })
    .join('\n');
}
