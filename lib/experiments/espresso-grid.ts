/**
 * Espresso's claim, measured: the quality of a trained encoder's embeddings at every layer × leading
 * width (angle_emb 0.6.1 serves them as `truncate_layer` and `embedding_size`; lib/embed/truncation.ts).
 * For one training run, each layer is one evaluation through the run store (./run-evaluation.ts: a
 * key over the weights, the layer and the widths, so a notebook run again reuses it): the test
 * pairs are embedded once at that layer and full width, and every width is scored on the leading
 * components of those vectors (width truncation is a prefix, so nothing else changes), Spearman's ρ
 * with a bootstrap 95% interval over the pairs (lib/report/statistics, BCa, seeded). The engine stops
 * at the layer (the ONNX graph ends there), so a shallow layer costs only its layers.
 */
import { join } from 'node:path';
import { resolveResultsDir } from '../config.js';
import type { StsSet } from '../data/sts.js';
import { PooledSentenceEncoder } from '../embed/encoder.js';
import { poolingModuleOf } from '../embed/pooling-module.js';
import { parsePooling, type Pooling } from '../embed/pooling.js';
import type { Evaluator } from '../eval/evaluator.js';
import { spearman } from '../eval/spearman.js';
import { embedUnique, pairCosines } from '../eval/vectors.js';
import { loadModel } from '../models/auto.js';
import type { LayerWidthPoint } from '../report/figures/layer-width.js';
import { bootstrapSpearmanCI } from '../report/statistics/spearman-bootstrap.js';
import { InputError } from '../util/errors.js';
import type { SimpleTable } from '../util/table.js';
import { runEvaluation } from './run-evaluation.js';
import type { RecipeRun } from './run-recipe.js';

/**
 * One cell of the grid: ρ × 100 on the test pairs with its bootstrap 95% interval (the figure's
 * point: row label, layer of hidden_states, leading width), and how many pairs it was measured on.
 */
export interface LayerWidthCell extends LayerWidthPoint {
  pairs: number;
}

/** Bootstrap resamples per cell (fixed, so the key and the intervals do not depend on the caller). */
const RESAMPLES = 1000;
const BOOTSTRAP_SEED = 12345;

const metricOf = (dim: number, part: '' | '_low' | '_high' = '') => `spearman_d${dim}${part}`;

/**
 * An evaluator that embeds the pairs once and scores every leading width in `widths` (each at most
 * the encoder's width): `spearman_d<w>`, `spearman_d<w>_low`, `spearman_d<w>_high`, and `spearman`
 * at the full width.
 */
export function widthSweepEvaluator(set: StsSet, widths: readonly number[]): Evaluator {
  if (set.pairs.length < 3) throw new InputError(`width sweep on ${set.task} ${set.name}: ${set.pairs.length} pairs; a bootstrap interval needs at least 3`);
  return {
    name: `${set.task} ${set.name} (widths ${widths.join(', ')})`,
    primaryMetric: 'spearman',
    higherIsBetter: true,
    rows: set.pairs.length,
    async evaluate(encoder) {
      const texts = set.pairs.flatMap((p) => [p.a, p.b]);
      const { emb, index } = await embedUnique(encoder, texts, { progress: false });
      const bad = widths.find((w) => !Number.isInteger(w) || w < 1 || w > emb.dim);
      if (bad !== undefined) throw new InputError(`width sweep: width ${bad} is not in 1..${emb.dim} (the encoder's width)`);
      const n = set.pairs.length;
      const ia = Uint32Array.from({ length: n }, (_, k) => index[2 * k]);
      const ib = Uint32Array.from({ length: n }, (_, k) => index[2 * k + 1]);
      const gold = Float64Array.from(set.pairs, (p) => p.score);
      const metrics: Record<string, number> = {};
      let full: Float64Array | undefined;
      for (const w of widths) {
        // The leading w components of every row (angle_emb's outputs[:, :w]).
        const data = new Float32Array(emb.rows * w);
        for (let r = 0; r < emb.rows; r++) data.set(emb.data.subarray(r * emb.dim, r * emb.dim + w), r * w);
        const cos = pairCosines({ data, rows: emb.rows, dim: w }, ia, ib);
        const b = bootstrapSpearmanCI(cos, gold, { resamples: RESAMPLES, seed: BOOTSTRAP_SEED });
        metrics[metricOf(w)] = b.spearman;
        metrics[metricOf(w, '_low')] = b.ci.low;
        metrics[metricOf(w, '_high')] = b.ci.high;
        if (w === emb.dim) full = cos;
      }
      full ??= pairCosines(emb, ia, ib);
      metrics.spearman = spearman(full, gold);
      return { metrics, predictions: full, gold };
    },
  };
}

export interface LayerWidthGridOptions {
  /** The row's label in tables and figures. */
  row: string;
  /** The finished training run whose selected (best dev) weights are measured. */
  training: RecipeRun;
  /** The pooling to measure with (default: the one the run trained with, from its record, else cls). */
  pooling?: Pooling;
  test: StsSet;
  /** Leading widths to score (each at most the model's width); default gridWidths(the model's width). */
  widths?: readonly number[];
  /**
   * Layers to score (default every one, 0..numLayers; from 1 for [CLS] pooling: the embedding
   * output's [CLS] state is the same vector for every text, so layer 0 has no ranking to score).
   */
  layers?: readonly number[];
  experiment: string;
  resultsDir?: string;
  force?: boolean;
  log?: (line: string) => void;
}

/** Every layer × width of one training run's selected weights (see the file comment). */
export async function layerWidthGrid(o: LayerWidthGridOptions): Promise<LayerWidthCell[]> {
  const resultsDir = resolveResultsDir(o.resultsDir);
  const best = join(resultsDir, o.training.run.record.experiment, 'runs', o.training.key, 'best');
  const m = await loadModel(best);
  try {
    const recorded = o.training.run.record.config.pooling;
    // The run's recorded pooling, else the one its best/ was saved with (the model's pooling module).
    const pooling = o.pooling ?? (typeof recorded === 'string' ? parsePooling(recorded) : poolingModuleOf(m).pooling);
    if (!pooling) throw new InputError(`the best checkpoint's sentence-transformers modules are none of our poolings: give the grid a pooling`, { file: best });
    const first = pooling === 'cls' ? 1 : 0;
    const layers = o.layers ?? Array.from({ length: m.model.numLayers + 1 - first }, (_, i) => i + first);
    const widths = [...(o.widths ?? gridWidths(m.model.hiddenSize))].sort((a, b) => a - b);
    const cells: LayerWidthCell[] = [];
    for (const layer of layers) {
      const encoder = new PooledSentenceEncoder(m, { pooling, truncate: { layer } });
      const ev = await runEvaluation({
        label: `${o.row} · layer ${layer}`,
        model: m,
        encoder,
        config: { pooling, truncateLayer: layer, widths, resamples: RESAMPLES, bootstrapSeed: BOOTSTRAP_SEED },
        evaluator: widthSweepEvaluator(o.test, widths),
        experiment: o.experiment,
        resultsDir,
        force: o.force,
        paperNote: 'no published number: the Espresso paper is not among the reference papers, and angle_emb reports no per-layer, per-width STS-B numbers for this recipe',
        details: { tableRow: o.row, training: o.training.run.record.runId, layer },
        log: o.log,
      });
      const metric = ev.run.record.metrics;
      for (const dim of widths) {
        cells.push({ row: o.row, layer, dim, spearman: metric[`test_${metricOf(dim)}`]!, low: metric[`test_${metricOf(dim, '_low')}`]!, high: metric[`test_${metricOf(dim, '_high')}`]!, pairs: o.test.pairs.length });
      }
    }
    return cells;
  } finally {
    m.model.dispose();
  }
}

/** The widths a grid scores on a model `width` wide: powers of two from 8 (or `from`) up to it, and the width itself. */
export function gridWidths(width: number, from = 8): number[] {
  const out: number[] = [];
  for (let w = from; w < width; w *= 2) out.push(w);
  out.push(width);
  return out;
}

/** The grid as a table: one line per row and layer, ρ × 100 [95% interval] per width. */
export function layerWidthTable(cells: readonly LayerWidthCell[], caption: string): SimpleTable {
  const widths = [...new Set(cells.map((c) => c.dim))].sort((a, b) => a - b);
  const keys = [...new Set(cells.map((c) => `${c.row}\u0000${c.layer}`))];
  const rows = keys.map((k) => {
    const [row, layer] = k.split('\u0000');
    const mine = cells.filter((c) => c.row === row && String(c.layer) === layer);
    return [row!, layer!, ...widths.map((w) => {
      const c = mine.find((x) => x.dim === w);
      return c ? `${c.spearman.toFixed(2)} [${c.low.toFixed(2)}, ${c.high.toFixed(2)}]` : '';
    })];
  });
  return { caption, columns: ['row', 'layer', ...widths.map((w) => `width ${w}`)], rows };
}
