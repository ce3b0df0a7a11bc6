/**
 * Reads a TensorFlow name-based checkpoint (`tf.compat.v1.train.Saver`, `tf.train.Checkpoint`): the
 * tensor-bundle format of tensorflow/core/util/tensor_bundle, as RAN's released `model.ckpt` is
 * published — a folder, the checkpoint prefix, or the release zip itself (read in place through
 * its central directory, nothing extracted).
 *
 * A bundle with prefix P is `P.index`, a LevelDB table (./sstable.ts) mapping each tensor's name
 * to a BundleEntryProto (./bundle-protos.ts: dtype, shape, shard, offset, size, masked CRC-32C)
 * and the empty key to the BundleHeaderProto (shard count, endianness, version), and the shards
 * `P.data-00000-of-0000N` .. holding the tensors' raw little-endian bytes at those offsets.
 *
 * Opening reads the index and checks every entry against the header and the shards' sizes
 * (dtype, shape vs byte size, shard present, bytes inside it); tensors are then read one at a
 * time, each CRC-32C-checked, into one typed array of its own (no second copy of the model is
 * held: a stored zip entry or a plain file is read with positioned reads; a deflated zip entry is
 * inflated once and tensors are views into it). Measured on this 2-core host under load, with a
 * synthetic 85.5M-parameter RanNet-shaped bundle (342 MB, 2 shards): folder or stored zip
 * 74-80 MB/s and 420 MB peak RSS (Node itself 85 MB); deflated zip 59 MB/s and 620 MB peak (one
 * shard's inflation transient). Anything that does not match is one InputError line naming the
 * tensor and the file.
 *
 * Not read: string and variant tensors (TensorFlow stores varint lengths and their own checksums
 * there; RAN's checkpoint has none, and a training checkpoint's `_CHECKPOINTABLE_OBJECT_GRAPH` is
 * skipped by `tensors()` and refused by name by `tensor()`), partitioned variables (entries with
 * slices), and big-endian bundles.
 */
import { closeSync, existsSync, fstatSync, openSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { endianness } from 'node:os';
import { basename, dirname, join } from 'node:path';

import { crc32c, unmaskCrc32c } from '../../util/crc32c.js';
import { InputError } from '../../util/errors.js';
import { readExactly } from '../safetensors.js';
import { looksLikeZip, ZipArchive, type ZipEntry } from '../torch-checkpoint/zip-archive.js';
import {
  BUNDLE_VERSION,
  type BundleEntry,
  type BundleHeader,
  decodeBundleEntry,
  decodeBundleHeader,
  dtypeName,
  NUMERIC_DTYPES,
  ProtoError,
  type TfNumericDtype,
} from './bundle-protos.js';
import { keyText, readTableEntries } from './sstable.js';

export type { TfNumericDtype } from './bundle-protos.js';

/** The typed array each numeric dtype is returned as (16-bit floats as their raw bits). */
export type TfTensorData = Float32Array | Float64Array | Int32Array | Uint8Array | Int16Array | Int8Array | BigInt64Array | Uint16Array | Uint32Array | BigUint64Array;

export interface TfTensorInfo {
  name: string;
  /** 'float32', 'int64', ... or, for tensors this reader does not return, 'string', 'variant', .... */
  dtype: string;
  /** True for dtypes `tensor()` returns. */
  numeric: boolean;
  shape: number[];
  shardId: number;
  /** Byte offset and size in the shard. */
  offset: number;
  size: number;
}

export interface TfTensor {
  name: string;
  dtype: TfNumericDtype;
  shape: number[];
  /** Little-endian values in row-major order; bool as 0/1 bytes; float16/bfloat16 as raw bits. */
  data: TfTensorData;
}

/** TensorFlow's shard file name: `<prefix>.data-00001-of-00004`. */
export function shardFileName(prefix: string, shard: number, numShards: number): string {
  return `${prefix}.data-${String(shard).padStart(5, '0')}-of-${String(numShards).padStart(5, '0')}`;
}

/** Positioned reads of one file, or one entry of a zip, named for messages. */
interface ByteSource {
  readonly name: string;
  readonly size: number;
  read(offset: number, length: number, what: string): Uint8Array;
}

/** The files of a checkpoint's folder: a directory on disk, or one folder inside a zip. */
interface FileSet {
  /** How messages name a file of the set. */
  displayName(file: string): string;
  open(file: string): ByteSource | undefined;
  readWhole(file: string): Uint8Array | undefined;
  close(): void;
}

const INDEX_SUFFIX = '.index';

/**
 * Opens the checkpoint at `path`: a folder holding `<prefix>.index` and its shards (the folder's
 * `checkpoint` state file picks one when there are several; a single subfolder is looked into),
 * the prefix itself (`.../model.ckpt`), its `.index` file, or a zip holding any of these (at any
 * depth, e.g. `RAN_base/model.ckpt.index`). Throws an InputError naming the path when none is there.
 */
export function readTfCheckpoint(path: string): TfCheckpoint {
  if (!existsSync(path)) {
    if (existsSync(path + INDEX_SUFFIX)) return openBundle(diskFiles(dirname(path)), basename(path), path);
    throw new InputError(`no TensorFlow checkpoint here: neither the path nor '${basename(path)}${INDEX_SUFFIX}' exists`, { file: path });
  }
  if (statSync(path).isDirectory()) {
    const prefix = prefixInFolder(path);
    return openBundle(diskFiles(dirname(join(path, prefix))), basename(prefix), path);
  }
  const fd = openSync(path, 'r');
  let head: Uint8Array;
  try {
    head = readExactly(fd, 0, Math.min(4, fstatSync(fd).size), path, 'the first bytes');
  } catch (e) {
    closeSync(fd);
    throw e;
  }
  if (looksLikeZip(head) || /\.zip$/i.test(path)) return openZip(fd, path);
  closeSync(fd);
  if (path.endsWith(INDEX_SUFFIX)) return openBundle(diskFiles(dirname(path)), basename(path).slice(0, -INDEX_SUFFIX.length), path);
  throw new InputError(`not a TensorFlow checkpoint: expected a folder, a zip, a '.index' file or the checkpoint prefix (a file '${basename(path)}${INDEX_SUFFIX}' beside it)`, { file: path });
}

/** The prefix (relative to `dir`) of the one checkpoint in a folder or its single subfolder. */
function prefixInFolder(dir: string): string {
  const prefixes = (d: string) => readdirSync(d).filter((f) => f.endsWith(INDEX_SUFFIX)).map((f) => f.slice(0, -INDEX_SUFFIX.length));
  let found = prefixes(dir);
  let sub = '';
  if (found.length === 0) {
    const subdirs = readdirSync(dir).filter((f) => !f.startsWith('.') && f !== '__MACOSX' && statSync(join(dir, f)).isDirectory());
    if (subdirs.length === 1) {
      sub = subdirs[0];
      found = prefixes(join(dir, sub));
    }
  }
  const stateFile = join(dir, sub, 'checkpoint');
  return join(sub, choosePrefix(found, existsSync(stateFile) ? readFileSync(stateFile, 'utf8') : undefined, join(dir, sub)));
}

/**
 * One prefix out of the `.index` files found: the only one, or the one the `checkpoint` state
 * file (a text proto: `model_checkpoint_path: "model.ckpt-1000"`) names.
 */
function choosePrefix(found: string[], stateText: string | undefined, where: string): string {
  if (found.length === 1) return found[0];
  if (found.length === 0) throw new InputError(`no TensorFlow checkpoint here: no '*${INDEX_SUFFIX}' file`, { file: where });
  const named = stateText?.match(/^\s*model_checkpoint_path:\s*"([^"]*)"/m)?.[1];
  const chosen = named === undefined ? undefined : found.find((p) => p === named || basename(p) === basename(named));
  if (chosen !== undefined) return chosen;
  throw new InputError(
    `${found.length} checkpoints here (${found.join(', ')}) and ${named === undefined ? "no 'checkpoint' state file naming one" : `the 'checkpoint' file names '${named}', which is not among them`}; pass the prefix of the one to read`,
    { file: where },
  );
}

function diskFiles(dir: string): FileSet {
  const fds: number[] = [];
  return {
    displayName: (f) => join(dir, f),
    open(f) {
      const file = join(dir, f);
      if (!existsSync(file)) return undefined;
      const fd = openSync(file, 'r');
      fds.push(fd);
      const size = fstatSync(fd).size;
      return { name: file, size, read: (offset, length, what) => readExactly(fd, offset, length, file, what) };
    },
    readWhole(f) {
      const file = join(dir, f);
      return existsSync(file) && statSync(file).isFile() ? new Uint8Array(readFileSync(file)) : undefined;
    },
    close() {
      for (const fd of fds.splice(0)) closeSync(fd);
    },
  };
}

/** Entries a zip tool adds that are not the release's files (macOS resource forks, folders). */
function isJunkEntry(name: string): boolean {
  return name.endsWith('/') || name.startsWith('__MACOSX/') || basename(name).startsWith('._');
}

function openZip(fd: number, path: string): TfCheckpoint {
  let zip: ZipArchive;
  try {
    zip = ZipArchive.read(fd, path, fstatSync(fd).size);
  } catch (e) {
    closeSync(fd);
    throw e;
  }
  const names = [...zip.entries.keys()].filter((n) => !isJunkEntry(n));
  const found = names.filter((n) => n.endsWith(INDEX_SUFFIX)).map((n) => n.slice(0, -INDEX_SUFFIX.length));
  let prefix: string;
  try {
    const states = names.filter((n) => basename(n) === 'checkpoint');
    const state = states.length === 1 ? new TextDecoder().decode(zip.readEntry(zip.entries.get(states[0])!)) : undefined;
    prefix = choosePrefix(found, state, path);
  } catch (e) {
    closeSync(fd);
    throw e;
  }
  const slash = prefix.lastIndexOf('/');
  const folder = slash >= 0 ? prefix.slice(0, slash + 1) : '';
  const inflated = new Map<string, Uint8Array>();
  const entry = (f: string): ZipEntry | undefined => zip.entries.get(folder + f);
  const files: FileSet = {
    displayName: (f) => `${path}!${folder}${f}`,
    open(f) {
      const e = entry(f);
      if (!e) return undefined;
      const name = `${path}!${folder}${f}`;
      if (e.flags & 1) throw new InputError(`zip entry '${e.name}' is encrypted`, { file: path });
      if (e.method === 0) {
        const at = zip.dataOffset(e);
        return {
          name,
          size: e.size,
          read: (offset, length, what) => {
            if (offset + length > e.size) throw new InputError(`truncated file: ${what} needs bytes ${offset}..${offset + length} but the entry has ${e.size}`, { file: name });
            return readExactly(fd, at + offset, length, name, what);
          },
        };
      }
      // A deflated entry cannot be read at an offset: inflate it once and hand out views of it.
      const whole = () => {
        let b = inflated.get(e.name);
        if (!b) inflated.set(e.name, (b = zip.readEntry(e)));
        return b;
      };
      return { name, size: e.size, read: (offset, length) => whole().subarray(offset, offset + length) };
    },
    readWhole(f) {
      const e = entry(f);
      return e ? zip.readEntry(e) : undefined;
    },
    close() {
      inflated.clear();
      closeSync(fd);
    },
  };
  return openBundle(files, prefix.slice(folder.length), path);
}

function openBundle(files: FileSet, prefix: string, source: string): TfCheckpoint {
  try {
    return TfCheckpoint.open(files, prefix, source);
  } catch (e) {
    files.close();
    throw e;
  }
}

/** An open checkpoint: its index read and checked; tensors read on demand. Call `close()`. */
export class TfCheckpoint {
  private closed = false;

  private constructor(
    /** The path it was opened from. */
    readonly source: string,
    /** The index file, as messages name it (`archive.zip!folder/model.ckpt.index` inside a zip). */
    readonly indexFile: string,
    readonly header: BundleHeader,
    private readonly files: FileSet,
    private readonly entries: ReadonlyMap<string, BundleEntry>,
    private readonly shards: readonly ByteSource[],
  ) {}

  /** @internal Reads and checks the index of `prefix` among `files`. */
  static open(files: FileSet, prefix: string, source: string): TfCheckpoint {
    const indexName = prefix + INDEX_SUFFIX;
    const indexFile = files.displayName(indexName);
    const index = files.readWhole(indexName);
    if (!index) throw new InputError(`no TensorFlow checkpoint index '${indexName}'`, { file: indexFile });
    const table = readTableEntries(index, indexFile);
    const bad = (msg: string) => new InputError(msg, { file: indexFile });
    if (table.length === 0 || table[0].key.byteLength !== 0) throw bad('the index has no bundle header (the entry with the empty key), so it is not a tensor bundle');
    let header: BundleHeader;
    try {
      header = decodeBundleHeader(table[0].value);
    } catch (e) {
      throw e instanceof ProtoError ? bad(`the bundle header does not decode: ${e.message}`) : e;
    }
    if (header.endianness !== 'little' || endianness() !== 'LE') throw bad(`the bundle is ${header.endianness}-endian and this machine ${endianness()}; only little-endian bundles on little-endian machines are read`);
    if (header.minConsumer > BUNDLE_VERSION || header.badConsumers.includes(BUNDLE_VERSION)) {
      throw bad(`the bundle needs a reader of version >= ${header.minConsumer}${header.badConsumers.length ? ` (and not ${header.badConsumers.join(', ')})` : ''}; this one implements version ${BUNDLE_VERSION}`);
    }
    if (!(header.numShards >= 1)) throw bad(`the bundle header states ${header.numShards} shards`);
    const entries = new Map<string, BundleEntry>();
    for (const { key, value } of table.slice(1)) {
      const name = new TextDecoder('utf-8').decode(key);
      let e: BundleEntry;
      try {
        e = decodeBundleEntry(value);
      } catch (err) {
        throw err instanceof ProtoError ? bad(`tensor ${keyText(key)}: its BundleEntryProto does not decode: ${err.message}`) : err;
      }
      entries.set(name, e);
    }
    // Open every shard and check every entry against it before any tensor is read.
    const shards: ByteSource[] = [];
    for (let s = 0; s < header.numShards; s++) {
      const shardName = shardFileName(prefix, s, header.numShards);
      const src = files.open(shardName);
      if (!src) {
        const inIt = [...entries].find(([, e]) => e.shardId === s)?.[0];
        throw new InputError(`missing data shard ${s + 1} of ${header.numShards}${inIt !== undefined ? ` (it holds tensor '${inIt}')` : ''}: the index names ${header.numShards} shard(s)`, { file: files.displayName(shardName) });
      }
      shards.push(src);
    }
    for (const [name, e] of entries) {
      const where = (s: number) => (s >= 0 && s < shards.length ? shards[s].name : indexFile);
      const badEntry = (msg: string, file = indexFile) => new InputError(`tensor '${name}': ${msg}`, { file });
      if (e.sliceCount > 0) throw badEntry(`a partitioned variable (${e.sliceCount} slices); only whole tensors are read`);
      if (e.unknownRank || e.shape.some((d) => !Number.isInteger(d) || d < 0)) throw badEntry(`shape [${e.shape.join(', ')}]${e.unknownRank ? ' of unknown rank' : ''} is not a fully defined shape`);
      if (e.shardId < 0 || e.shardId >= shards.length) throw badEntry(`lives in shard ${e.shardId}, but the bundle has ${shards.length} shard(s)`);
      const dt = NUMERIC_DTYPES.get(e.dtypeCode);
      if (dt) {
        const want = e.shape.reduce((a, d) => a * d, 1) * dt.bytes;
        if (e.size !== want) throw badEntry(`the index gives ${e.size} bytes for ${dt.name} [${e.shape.join(', ')}], which takes ${want}`);
      }
      if (e.offset < 0 || e.offset + e.size > shards[e.shardId].size) {
        throw badEntry(`needs bytes ${e.offset}..${e.offset + e.size} of its shard, which has ${shards[e.shardId].size} bytes (truncated?)`, where(e.shardId));
      }
    }
    return new TfCheckpoint(source, indexFile, header, files, entries, shards);
  }

  /** Every tensor name in the index, in its (bytewise) order, string and variant ones included. */
  names(): string[] {
    return [...this.entries.keys()];
  }

  has(name: string): boolean {
    return this.entries.has(name);
  }

  info(name: string): TfTensorInfo {
    const e = this.entries.get(name);
    if (!e) throw new InputError(`no tensor '${name}' in the checkpoint (it has ${this.entries.size})`, { file: this.indexFile });
    return { name, dtype: dtypeName(e.dtypeCode), numeric: NUMERIC_DTYPES.has(e.dtypeCode), shape: [...e.shape], shardId: e.shardId, offset: e.offset, size: e.size };
  }

  /**
   * One tensor, its CRC-32C checked. From a file or a stored zip entry: a new array each call.
   * From a deflated zip entry: a view of that shard, inflated once on first use (so two calls
   * share memory; copy before writing into it).
   */
  tensor(name: string): TfTensor {
    if (this.closed) throw new Error(`TfCheckpoint ${this.source} is closed`);
    const info = this.info(name);
    const e = this.entries.get(name)!;
    const dt = NUMERIC_DTYPES.get(e.dtypeCode);
    if (!dt) {
      throw new InputError(`tensor '${name}' has dtype ${info.dtype}, which this reader does not return (only numeric tensors; RAN's weights are float32)`, { file: this.indexFile });
    }
    const shard = this.shards[e.shardId];
    const bytes = shard.read(e.offset, e.size, `tensor '${name}'`);
    const expected = unmaskCrc32c(e.maskedCrc32c);
    const actual = crc32c(bytes);
    if (actual !== expected) {
      throw new InputError(`tensor '${name}' (${e.size} bytes at offset ${e.offset}) fails its checksum: the index says CRC-32C 0x${expected.toString(16).padStart(8, '0')}, the bytes give 0x${actual.toString(16).padStart(8, '0')}`, { file: shard.name });
    }
    return { name, dtype: dt.name, shape: info.shape, data: typedArray(dt.name, bytes) };
  }

  /** The numeric tensors one at a time, in index order; string/variant entries are skipped. */
  *tensors(): Generator<TfTensor> {
    for (const [name, e] of this.entries) if (NUMERIC_DTYPES.has(e.dtypeCode)) yield this.tensor(name);
  }

  /**
   * A file beside the checkpoint (in its folder, or its folder inside the zip), e.g. the release's
   * `config.json` and `vocab.txt`; undefined when absent.
   */
  siblingFile(fileName: string): Uint8Array | undefined {
    return this.files.readWhole(fileName);
  }

  /** Where a sibling file is, as messages name it. */
  siblingName(fileName: string): string {
    return this.files.displayName(fileName);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.files.close();
  }
}

/** A typed view of `bytes` (copied first only when its offset is not aligned to the element size). */
function typedArray(dtype: TfNumericDtype, bytes: Uint8Array): TfTensorData {
  const ctor = {
    float32: Float32Array,
    float64: Float64Array,
    int32: Int32Array,
    uint8: Uint8Array,
    int16: Int16Array,
    int8: Int8Array,
    int64: BigInt64Array,
    bool: Uint8Array,
    bfloat16: Uint16Array,
    uint16: Uint16Array,
    float16: Uint16Array,
    uint32: Uint32Array,
    uint64: BigUint64Array,
  }[dtype];
  const b = bytes.byteOffset % ctor.BYTES_PER_ELEMENT === 0 ? bytes : bytes.slice();
  // A Buffer's memory is an ArrayBuffer (never shared), which the typed-array constructors want.
  return new ctor(b.buffer as ArrayBuffer, b.byteOffset, b.byteLength / ctor.BYTES_PER_ELEMENT);
}
