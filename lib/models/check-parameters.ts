/**
 * Fitting a checkpoint's tensors to the parameters an architecture expects: every expected name
 * present, with the config's shape and float data, and nothing left over. Each architecture maps
 * checkpoint names to its own (bert/weights.ts, llama/weights.ts); the checking and the error are
 * shared, so a wrong checkpoint is explained the same way whatever the model.
 */
import { InputError } from '../util/errors.js';

export interface CheckpointTensor {
  shape: number[];
  data: ArrayLike<number>;
  /** The stored dtype, where the reader says it: then `data` is not touched here (a lazy source reads it when touched). */
  dtype?: string;
}

/** The stored dtypes that are read as float32 (../models/safetensors.ts). */
const FLOAT_DTYPES: ReadonlySet<string> = new Set(['F64', 'F32', 'F16', 'BF16']);

export interface FitParametersOptions {
  /** The checkpoint file, for the error. */
  file: string;
  /** What the tensors must fit, e.g. `the BERT config (2 layers, hidden 128)`. */
  target: string;
  /** How tensors nobody expects are called in the error (default `unexpected`). */
  unexpectedLabel?: string;
}

/**
 * A checkpoint's tensors under the architecture's names: `canonical` renames one, or returns
 * undefined for a tensor the model does not keep (a recomputed buffer, a tied head); two tensors
 * for one parameter are an InputError naming the file.
 */
export function byCanonicalName<T>(tensors: ReadonlyMap<string, T>, canonical: (name: string) => string | undefined, file: string): Map<string, T> {
  const found = new Map<string, T>();
  for (const [name, t] of tensors) {
    const c = canonical(name);
    if (c === undefined) continue;
    if (found.has(c)) throw new InputError(`checkpoint has two tensors for parameter '${c}' (e.g. '${name}')`, { file });
    found.set(c, t);
  }
  return found;
}

/**
 * The expected parameters, taken from `found` (renamed tensors of a checkpoint); an InputError
 * listing every missing, mismatched and unexpected tensor when they do not fit.
 */
export function fitParameters<T extends CheckpointTensor>(found: ReadonlyMap<string, T>, want: ReadonlyMap<string, readonly number[]>, o: FitParametersOptions): Map<string, T> {
  const missing: string[] = [];
  const mismatched: string[] = [];
  const out = new Map<string, T>();
  for (const [name, shape] of want) {
    const t = found.get(name);
    if (!t) {
      missing.push(name);
      continue;
    }
    if (t.shape.length !== shape.length || t.shape.some((d, i) => d !== shape[i])) {
      mismatched.push(`${name}: checkpoint ${JSON.stringify(t.shape)}, config expects ${JSON.stringify(shape)}`);
      continue;
    }
    if (!(t.dtype !== undefined ? FLOAT_DTYPES.has(t.dtype) : t.data instanceof Float32Array)) {
      mismatched.push(`${name}: integer tensor where a float parameter is expected`);
      continue;
    }
    out.set(name, t);
  }
  const unexpected = [...found.keys()].filter((n) => !want.has(n));
  if (missing.length || mismatched.length || unexpected.length) {
    const parts: string[] = [];
    if (missing.length) parts.push(`missing ${missing.length}: ${missing.join(', ')}`);
    if (mismatched.length) parts.push(`shape mismatch ${mismatched.length}: ${mismatched.join('; ')}`);
    if (unexpected.length) parts.push(`${o.unexpectedLabel ?? 'unexpected'} ${unexpected.length}: ${unexpected.join(', ')}`);
    throw new InputError(`checkpoint does not fit ${o.target}: ${parts.join(' | ')}`, { file: o.file });
  }
  return out;
}
