/**
 * Finding and reading the weight files of a Hugging Face model directory, in the order
 * transformers prefers them: `model.safetensors`, the shards listed in
 * `model.safetensors.index.json`, `pytorch_model.bin`, the shards listed in
 * `pytorch_model.bin.index.json`. PyTorch checkpoints are read by ./torch-checkpoint/ (tensors
 * only; no pickled code is run), safetensors by ./safetensors.ts, both one tensor at a time.
 *
 * An index is `{"metadata": {...}, "weight_map": {tensor name: shard file}}`. It is checked
 * against its shards when they are opened: a tensor the index lists but its shard lacks, a tensor a
 * shard holds that the index does not list (or maps to another shard), a tensor in two files, a
 * shard that is missing or a shard path outside the directory are InputErrors naming the file and
 * the tensor.
 *
 * `openWeights(files)` gives lazy access (names, dtypes and shapes from the headers; each tensor
 * read on demand, as stored with `readRaw` or converted to float32/int32 with `read`), so a loader
 * never needs a whole weight file in memory (`lazyTensors(reader)` hands a model constructor the
 * tensors that way); `readTensors(files)` reads them all.
 */
import { createHash } from 'node:crypto';
import { closeSync, createReadStream, existsSync, openSync, readFileSync, readSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { InputError } from '../util/errors.js';
import { openSafetensors, type RawTensor, type SafetensorsDtype, type TensorEntry } from './safetensors.js';
import { looksLikeTorchCheckpoint, openTorchCheckpoint } from './torch-checkpoint/index.js';

export const SAFETENSORS_FILE = 'model.safetensors';
export const SAFETENSORS_INDEX = 'model.safetensors.index.json';
export const PYTORCH_FILE = 'pytorch_model.bin';
export const PYTORCH_INDEX = 'pytorch_model.bin.index.json';

/** The weight layouts of a model directory, in the order they are looked for. */
export const WEIGHT_LAYOUTS = [SAFETENSORS_FILE, SAFETENSORS_INDEX, PYTORCH_FILE, PYTORCH_INDEX] as const;

/** Weight files of other frameworks, named when a directory has only those. */
const UNSUPPORTED_WEIGHTS: Record<string, string> = {
  'tf_model.h5': 'TensorFlow weights',
  'flax_model.msgpack': 'Flax weights',
  'model.onnx': 'an ONNX graph',
};

export type WeightFileFormat = 'safetensors' | 'pytorch';

/** One weight file opened for reading tensor by tensor. */
export interface TensorFile {
  readonly file: string;
  names(): string[];
  info(name: string): { dtype: SafetensorsDtype; shape: number[] };
  readRaw(name: string): RawTensor;
  read(name: string): TensorEntry;
  close(): void;
}

/** A sharded checkpoint's index: which shard holds which tensor. */
export interface WeightIndex {
  file: string;
  /** Tensor name -> shard path relative to the index's directory, as the index says. */
  weightMap: Map<string, string>;
  /** The shards' absolute paths, each once, in sorted order. */
  shards: string[];
}

/**
 * Reads and checks a sharded checkpoint's index (JSON shape, shard paths inside the directory). That
 * the shards exist is checked when they are opened (WeightReader), so a directory's other problems
 * (its config) can be reported first.
 */
export function readWeightIndex(indexPath: string): WeightIndex {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(indexPath, 'utf8'));
  } catch (e) {
    throw new InputError(`not a readable JSON index: ${(e as Error).message}`, { file: indexPath });
  }
  const wm = (raw as { weight_map?: unknown } | null)?.weight_map;
  if (wm === null || typeof wm !== 'object' || Array.isArray(wm)) throw new InputError("has no 'weight_map' object {tensor name: shard file}", { file: indexPath });
  const entries = Object.entries(wm as Record<string, unknown>);
  if (entries.length === 0) throw new InputError("'weight_map' is empty", { file: indexPath });
  const dir = dirname(resolve(indexPath));
  const weightMap = new Map<string, string>();
  const shards = new Set<string>();
  for (const [name, shard] of entries) {
    if (typeof shard !== 'string' || shard === '') throw new InputError(`weight_map['${name}'] is ${JSON.stringify(shard)}, not a shard file name`, { file: indexPath });
    const abs = resolve(dir, shard);
    const rel = relative(dir, abs);
    if (isAbsolute(shard) || rel === '' || rel.split(sep)[0] === '..' || isAbsolute(rel)) {
      throw new InputError(`weight_map['${name}'] = ${JSON.stringify(shard)} points outside the model directory`, { file: indexPath });
    }
    weightMap.set(name, shard);
    shards.add(abs);
  }
  return { file: indexPath, weightMap, shards: [...shards].sort() };
}

/** The weight files of a model directory, in load order (see the file header for the order). */
export function weightFiles(dir: string): string[] {
  // Shard paths keep the caller's form of `dir` (relative stays relative).
  const shardsOf = (index: string) => readWeightIndex(join(dir, index)).shards.map((abs) => join(dir, relative(resolve(dir), abs)));
  const single = join(dir, SAFETENSORS_FILE);
  if (existsSync(single)) return [single];
  if (existsSync(join(dir, SAFETENSORS_INDEX))) return shardsOf(SAFETENSORS_INDEX);
  const bin = join(dir, PYTORCH_FILE);
  if (existsSync(bin)) return [bin];
  if (existsSync(join(dir, PYTORCH_INDEX))) return shardsOf(PYTORCH_INDEX);
  const other = Object.entries(UNSUPPORTED_WEIGHTS).find(([f]) => existsSync(join(dir, f)));
  const hint = other ? ` (it has ${other[0]}: ${other[1]}, which are not read; convert them to safetensors)` : '';
  throw new InputError(`model directory has none of ${WEIGHT_LAYOUTS.join(', ')}${hint}`, { file: dir });
}

/** The format of a weight file: by its extension, else by its first bytes. */
export function weightFileFormat(path: string): WeightFileFormat {
  if (path.endsWith('.safetensors')) return 'safetensors';
  if (/\.(bin|pt|pth|ckpt)$/.test(path)) return 'pytorch';
  const head = new Uint8Array(16);
  let n = 0;
  try {
    const fd = openSync(path, 'r');
    try {
      n = readSync(fd, head, 0, head.byteLength, 0);
    } finally {
      closeSync(fd);
    }
  } catch (e) {
    throw new InputError(`cannot read weight file (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`, { file: path });
  }
  if (looksLikeTorchCheckpoint(head.subarray(0, n))) return 'pytorch';
  if (n >= 9 && head[8] === 0x7b /* '{' after the 8-byte header length */) return 'safetensors';
  throw new InputError('not a weight file this project reads: neither safetensors nor a PyTorch checkpoint', { file: path });
}

/** Opens one weight file (safetensors or PyTorch) for reading tensor by tensor. */
export function openWeightFile(path: string): TensorFile {
  if (!existsSync(path)) throw new InputError('weight file listed by the model is missing', { file: path });
  return weightFileFormat(path) === 'safetensors' ? openSafetensors(path) : openTorchCheckpoint(path);
}

/** Where a tensor of a set of weight files is. */
export interface WeightTensorInfo {
  name: string;
  dtype: SafetensorsDtype;
  shape: number[];
  file: string;
}

/**
 * The index beside `files` that lists exactly these files as its shards (so a sharded checkpoint is
 * checked against its index even when the caller passes only the shard list), or undefined.
 */
function indexFor(files: string[]): WeightIndex | undefined {
  if (files.length === 0) return undefined;
  const dir = dirname(resolve(files[0]));
  if (!files.every((f) => dirname(resolve(f)) === dir)) return undefined;
  const name = files[0].endsWith('.safetensors') ? SAFETENSORS_INDEX : PYTORCH_INDEX;
  const path = join(dir, name);
  if (!existsSync(path)) return undefined;
  const index = readWeightIndex(path);
  const want = [...new Set(files.map((f) => resolve(f)))].sort();
  return want.length === index.shards.length && want.every((f, i) => f === index.shards[i]) ? index : undefined;
}

/** Problems of at most this many tensors are listed in one index error. */
const MAX_LISTED = 5;

function checkAgainstIndex(index: WeightIndex, where: Map<string, string>): void {
  const dir = dirname(resolve(index.file));
  const problems: string[] = [];
  for (const [name, shard] of index.weightMap) {
    const actual = where.get(name);
    const listed = resolve(dir, shard);
    if (actual === undefined) problems.push(`tensor '${name}' is listed for ${shard} but ${shard} does not contain it`);
    else if (resolve(actual) !== listed) problems.push(`tensor '${name}' is listed for ${shard} but is in ${relative(dir, actual)}`);
  }
  for (const [name, file] of where) {
    if (!index.weightMap.has(name)) problems.push(`tensor '${name}' is in ${relative(dir, file)} but the index does not list it`);
  }
  if (problems.length > 0) {
    const more = problems.length > MAX_LISTED ? `; and ${problems.length - MAX_LISTED} more` : '';
    throw new InputError(`index does not match its shards: ${problems.slice(0, MAX_LISTED).join('; ')}${more}`, { file: index.file });
  }
}

/**
 * The tensors of a set of weight files (one checkpoint, possibly sharded), read on demand. Opening
 * reads only headers (safetensors) or the pickle (PyTorch); each `read`/`readRaw` reads one tensor.
 * Holds the files open until `close()`.
 */
export class WeightReader {
  private readonly byName = new Map<string, TensorFile>();

  private constructor(private readonly opened: TensorFile[]) {
    for (const f of opened) for (const n of f.names()) this.byName.set(n, f);
  }

  /** Opens `files`; a tensor in two files is an error, and an index beside the shards is checked (see the file header). */
  static open(files: string[], index: WeightIndex | undefined = indexFor(files)): WeightReader {
    const opened: TensorFile[] = [];
    try {
      if (index) {
        const dir = dirname(resolve(index.file));
        for (const shard of index.shards) {
          if (existsSync(shard)) continue;
          const names = [...index.weightMap].filter(([, s]) => resolve(dir, s) === shard).map(([n]) => n);
          throw new InputError(`shard ${relative(dir, shard)} (listed for ${names.length} tensors, e.g. '${names[0]}') is missing from ${dir}`, { file: index.file });
        }
      }
      const where = new Map<string, string>();
      for (const f of files) {
        const tf = openWeightFile(f);
        opened.push(tf);
        for (const n of tf.names()) {
          const seen = where.get(n);
          if (seen !== undefined) throw new InputError(`tensor '${n}' appears in more than one weight file (also in ${basename(seen)})`, { file: f });
          where.set(n, f);
        }
      }
      if (index) checkAgainstIndex(index, where);
      return new WeightReader(opened);
    } catch (e) {
      for (const f of opened) f.close();
      throw e;
    }
  }

  names(): string[] {
    return [...this.byName.keys()];
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  private fileOf(name: string): TensorFile {
    const f = this.byName.get(name);
    if (!f) throw new InputError(`no tensor '${name}' in ${this.opened.map((o) => basename(o.file)).join(', ')}`);
    return f;
  }

  info(name: string): WeightTensorInfo {
    const f = this.fileOf(name);
    const { dtype, shape } = f.info(name);
    return { name, dtype, shape: [...shape], file: f.file };
  }

  /** The tensor as stored: dtype and little-endian bytes (a 16-bit tensor stays 16-bit). */
  readRaw(name: string): RawTensor {
    return this.fileOf(name).readRaw(name);
  }

  /** The tensor as Float32Array (floating dtypes) or Int32Array (integer and bool dtypes). */
  read(name: string): TensorEntry {
    return this.fileOf(name).read(name);
  }

  close(): void {
    for (const f of this.opened) f.close();
  }
}

/** Opens a set of weight files for reading tensor by tensor (see WeightReader; call close()). */
export function openWeights(files: string[], index?: WeightIndex): WeightReader {
  return WeightReader.open(files, index ?? indexFor(files));
}

/**
 * A tensor of an open WeightReader, read only when asked: shape and dtype come from the header,
 * `data` reads the tensor (converted as `read` does) each time it is touched, `readRaw` its
 * stored bytes. Nothing is cached, so a model constructor consuming these one by one holds one
 * tensor at a time (the reader must stay open until it is done).
 */
export class LazyTensor {
  readonly dtype: SafetensorsDtype;
  readonly shape: number[];

  constructor(
    private readonly reader: WeightReader,
    readonly name: string,
  ) {
    const info = reader.info(name);
    this.dtype = info.dtype;
    this.shape = info.shape;
  }

  get data(): Float32Array | Int32Array {
    return this.reader.read(this.name).data;
  }

  readRaw(): RawTensor {
    return this.reader.readRaw(this.name);
  }
}

/** Every tensor of an open reader as a LazyTensor (no tensor data is read here). */
export function lazyTensors(reader: WeightReader): Map<string, LazyTensor> {
  return new Map(reader.names().map((name) => [name, new LazyTensor(reader, name)]));
}

/** All tensors of the given weight files (safetensors or PyTorch), merged and converted; a name in two files is an error. */
export function readTensors(files: string[]): Map<string, TensorEntry> {
  const r = openWeights(files);
  try {
    const all = new Map<string, TensorEntry>();
    for (const name of r.names()) all.set(name, r.read(name));
    return all;
  } finally {
    r.close();
  }
}

/** sha256 over the weight files' bytes, in order: the weights' identity in results files. */
export async function weightsSha256(files: string[]): Promise<string> {
  const h = createHash('sha256');
  for (const f of files) {
    await new Promise<void>((resolve, reject) => {
      createReadStream(f)
        .on('data', (c) => h.update(c))
        .on('end', () => resolve())
        .on('error', reject);
    });
  }
  return h.digest('hex');
}
