/**
 * A RanNet built from a config.json object alone, with random weights: the rehearsal's RAN_base at
 * its (assumed, ./ran-base.ts) shapes and tests' tiny models. The values follow the Keras config's
 * initialisers where they matter for scale: kernels and embeddings N(0, kernel_initializer_range
 * = 0.02) (RanNetParams' truncated normal, untruncated here), LayerNorm gamma 1, beta and biases 0.
 * On the shape-only backend (lib/backend/shape-only) every parameter is a view of one zero buffer,
 * as ../model-from-config.ts does for the other architectures.
 */
import { isShapeOnlyBackend } from '../../backend/shape-only/index.js';
import { mulberry32 } from '../../util/mulberry32.js';
import type { InitialWeight } from '../transformer-model.js';
import { parseRanConfig } from './config.js';
import { RanModel } from './model.js';
import { ranCheckpointShapes, ranParameterName } from './weights.js';

/** Parameter shapes of a config, under the model's names ([out, in] weights). */
export function ranParameterShapes(config: Readonly<Record<string, unknown>>): Map<string, number[]> {
  const cfg = parseRanConfig({ ...config }, 'config');
  const out = new Map<string, number[]>();
  for (const [name, shape] of ranCheckpointShapes(cfg)) out.set(ranParameterName(name), name.endsWith('/kernel') ? [shape[1], shape[0]] : shape);
  return out;
}

export function ranParameterCount(config: Readonly<Record<string, unknown>>): number {
  let n = 0;
  for (const s of ranParameterShapes(config).values()) n += s.reduce((a, b) => a * b, 1);
  return n;
}

/** A random RanNet of `config` (seeded), on the active backend. */
export function ranModelFromConfig(config: Readonly<Record<string, unknown>>, opts: { seed?: number; dropoutSeed?: number } = {}): RanModel {
  const cfg = parseRanConfig({ ...config }, 'config');
  const std = typeof config.kernel_initializer_range === 'number' ? config.kernel_initializer_range : 0.02;
  const shapeOnly = isShapeOnlyBackend();
  let shared = new Float32Array(0);
  const next = mulberry32(opts.seed ?? 0);
  const uniform = () => (next() + 0.5) / 4294967296;
  const weights = new Map<string, InitialWeight>();
  for (const [name, shape] of ranParameterShapes(config)) {
    const n = shape.reduce((a, b) => a * b, 1);
    let data: Float32Array;
    if (shapeOnly) {
      if (shared.length < n) shared = new Float32Array(n);
      data = shared.subarray(0, n);
    } else {
      data = new Float32Array(n);
      if (name.endsWith('.gamma')) data.fill(1);
      else if (name.endsWith('.weight') || name.endsWith('.embeddings')) {
        for (let i = 0; i < n; i += 2) {
          const r = Math.sqrt(-2 * Math.log(uniform())) * std;
          const a = 2 * Math.PI * uniform();
          data[i] = r * Math.cos(a);
          if (i + 1 < n) data[i + 1] = r * Math.sin(a);
        }
      }
    }
    weights.set(name, { shape, data });
  }
  return new RanModel(cfg, weights, opts.dropoutSeed ?? 0);
}
