/**
 * The weights of a model built from its config alone (./model-from-config.ts): zeros or HF's
 * random initialisation — N(0, std) for linear and embedding weights, zero biases, norm weights 1
 * — or, on the shape-only backend (lib/backend/shape-only), views of one shared zero buffer (that
 * backend keeps no values). An architecture's registry entry (./architecture.ts `fromConfig`) hands
 * them to its model constructor.
 *
 * The weights come as a lazily filled map, one tensor at a time, so the host never holds more
 * than one parameter's values while a constructor copies them into tf.Variables.
 */
import { isShapeOnlyBackend } from '../backend/shape-only/index.js';
import { mulberry32 } from '../util/mulberry32.js';

export interface InitialValueOptions {
  /** 'zeros', or 'normal' (HF's init: N(0, std) weights, zero biases, norm weights 1). Default 'normal'. */
  init?: 'zeros' | 'normal';
  /** Seed of the 'normal' values (default 0). */
  seed?: number;
}

interface Weight {
  shape: number[];
  data: Float32Array;
}

function sizeOf(shape: readonly number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

/**
 * A Map whose values are made when iterated (each one after the previous was consumed), so a
 * model constructor that copies them one by one into tf.Variables never sees them all at once.
 */
class LazyWeights extends Map<string, Weight> {
  constructor(
    private readonly shapes: ReadonlyMap<string, number[]>,
    private readonly make: (name: string, shape: number[]) => Float32Array,
  ) {
    super();
  }

  override get size(): number {
    return this.shapes.size;
  }

  override has(name: string): boolean {
    return this.shapes.has(name);
  }

  override get(name: string): Weight | undefined {
    const shape = this.shapes.get(name);
    return shape ? { shape: shape.slice(), data: this.make(name, shape) } : undefined;
  }

  override *entries(): IterableIterator<[string, Weight]> {
    for (const [name, shape] of this.shapes) yield [name, { shape: shape.slice(), data: this.make(name, shape) }];
  }

  override [Symbol.iterator](): IterableIterator<[string, Weight]> {
    return this.entries();
  }

  override *keys(): IterableIterator<string> {
    yield* this.shapes.keys();
  }

  override *values(): IterableIterator<Weight> {
    for (const [, w] of this.entries()) yield w;
  }

  override forEach(cb: (value: Weight, key: string, map: Map<string, Weight>) => void): void {
    for (const [k, v] of this.entries()) cb(v, k, this);
  }
}

function isNormWeight(name: string): boolean {
  // BERT's LayerNorm, LLaMA's input_layernorm / norm, OPT's self_attn_layer_norm / final_layer_norm.
  return /LayerNorm\.weight$|layernorm\.weight$|layer_norm\.weight$|(^|\.)norm\.weight$/.test(name);
}

function isBias(name: string): boolean {
  return name.endsWith('.bias');
}

/** The values a parameter starts from. */
function valueMaker(opts: InitialValueOptions, std: number): (name: string, shape: number[]) => Float32Array {
  if (isShapeOnlyBackend()) {
    // The shape-only backend ignores values: one zero buffer, viewed at each parameter's size.
    let shared = new Float32Array(0);
    return (_name, shape) => {
      const n = sizeOf(shape);
      if (shared.length < n) shared = new Float32Array(n);
      return shared.subarray(0, n);
    };
  }
  const next = mulberry32(opts.seed ?? 0);
  const uniform = () => (next() + 0.5) / 4294967296;
  return (name, shape) => {
    const data = new Float32Array(sizeOf(shape));
    if (isNormWeight(name)) data.fill(1);
    else if ((opts.init ?? 'normal') === 'normal' && !isBias(name)) {
      // Box-Muller pairs: N(0, std).
      for (let i = 0; i < data.length; i += 2) {
        const r = Math.sqrt(-2 * Math.log(uniform())) * std;
        const a = 2 * Math.PI * uniform();
        data[i] = r * Math.cos(a);
        if (i + 1 < data.length) data[i + 1] = r * Math.sin(a);
      }
    }
    return data;
  };
}

/** HF's standard deviation of the initial weights: initializer_range (BERT, LLaMA), init_std (OPT), else 0.02. */
export function initStdOf(config: Readonly<Record<string, unknown>>): number {
  return typeof config.initializer_range === 'number' ? config.initializer_range : typeof config.init_std === 'number' ? config.init_std : 0.02;
}

/** The initial weights of parameters of these shapes (see the file comment), made as they are read. */
export function initialWeights(shapes: ReadonlyMap<string, number[]>, opts: InitialValueOptions, std: number): Map<string, Weight> {
  return new LazyWeights(shapes, valueMaker(opts, std));
}

/** The number of values of parameters of these shapes. */
export function parameterCount(shapes: ReadonlyMap<string, number[]>): number {
  let n = 0;
  for (const shape of shapes.values()) n += sizeOf(shape);
  return n;
}
