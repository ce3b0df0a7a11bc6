/**
 * Writes TensorFlow tensor bundles (`<prefix>.index` + `<prefix>.data-0000i-of-0000n`) for the
 * checkpoint reader's tests, from the format's specification, not from TensorFlow's code:
 *
 * - the index is a LevelDB table (doc/table_format.md of google/leveldb): data blocks of
 *   prefix-compressed entries with a restart point every `restartInterval` entries, cut when a
 *   block passes `blockSize` bytes; an empty metaindex block; an index block (restart interval 1,
 *   as LevelDB's) keyed by the shortest separator between blocks; each block followed by its
 *   compression byte and masked CRC-32C; the 48-byte footer with the magic number. Uncompressed,
 *   with LevelDB's defaults, it writes the index of test/fixtures/tf-bundles' TensorFlow 1.12
 *   bundle byte for byte (a test checks). Blocks may be snappy-compressed by the small greedy
 *   encoder below (TensorFlow 2.14 compresses them, with real snappy: other bytes, same format).
 * - the empty key holds the BundleHeaderProto, every tensor's name a BundleEntryProto
 *   (tensorflow/core/protobuf/tensor_bundle.proto field numbers, encoded by hand).
 * - the data shards hold each tensor's little-endian bytes; string tensors as tensor_bundle.cc's
 *   comment describes them (varint64 lengths, the masked CRC of the lengths as uint32s, the
 *   bytes), variant tensors as varint64 length + serialized proto + masked running CRC.
 *
 * Also a zip writer with deflated entries (the release zip may be compressed), which
 * ./zip-writer.ts (stored only) does not cover.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { crc32, deflateRawSync } from 'node:zlib';

import { crc32c, maskCrc32c } from '../../lib/util/crc32c.js';

/** framework/types.proto DataType numbers used here. */
export const DT = { float: 1, double: 2, int32: 3, uint8: 4, string: 7, int64: 9, bool: 10, half: 19, variant: 21 } as const;

export interface BundleTensor {
  name: string;
  dtype: number;
  shape: number[];
  /** Raw little-endian bytes (numeric dtypes), or the elements of a string tensor. */
  bytes?: Uint8Array;
  strings?: string[];
}

export interface BundleOptions extends TableOptions {
  /** Number of data shards (default 1); tensors go round-robin unless `shardOf` says otherwise. */
  numShards?: number;
  shardOf?: (name: string, i: number) => number;
  /** Zero bytes between tensors in a shard, aligning each start to this many bytes (default 1). */
  alignment?: number;
  /** Header fields to override (e.g. endianness 1, min_consumer 2). */
  header?: { endianness?: number; producer?: number; minConsumer?: number };
}

export function bytesOf(a: ArrayBufferView): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}

// ---- protobuf wire encoding ----

function varint(v: number | bigint): number[] {
  let x = BigInt.asUintN(64, BigInt(v));
  const out: number[] = [];
  do {
    let b = Number(x & 0x7fn);
    x >>= 7n;
    if (x) b |= 0x80;
    out.push(b);
  } while (x);
  return out;
}
const fieldVarint = (n: number, v: number | bigint) => [...varint((n << 3) | 0), ...varint(v)];
const fieldBytes = (n: number, b: ArrayLike<number>) => [...varint((n << 3) | 2), ...varint(b.length), ...Array.from(b)];
const fieldFixed32 = (n: number, v: number) => [...varint((n << 3) | 5), v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, (v >>> 24) & 0xff];

export function headerProto(numShards: number, h: BundleOptions['header'] = {}): Uint8Array {
  const version = [...fieldVarint(1, h.producer ?? 1), ...(h.minConsumer ? fieldVarint(2, h.minConsumer) : [])];
  return Uint8Array.from([...fieldVarint(1, numShards), ...(h.endianness ? fieldVarint(2, h.endianness) : []), ...fieldBytes(3, version)]);
}

export function entryProto(e: { dtype: number; shape: number[]; shard: number; offset: number; size: number; crc: number }): Uint8Array {
  const shape = e.shape.flatMap((d) => fieldBytes(2, fieldVarint(1, d)));
  // proto3 omits zero-valued scalars, as TensorFlow's serializer does.
  return Uint8Array.from([
    ...fieldVarint(1, e.dtype),
    ...fieldBytes(2, shape),
    ...(e.shard ? fieldVarint(3, e.shard) : []),
    ...(e.offset ? fieldVarint(4, e.offset) : []),
    ...(e.size ? fieldVarint(5, e.size) : []),
    ...fieldFixed32(6, maskCrc32c(e.crc)),
  ]);
}

// ---- tensor data ----

function u32le(v: number): Uint8Array {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setUint32(0, v >>> 0, true);
  return b;
}

/** A tensor's bytes in its shard and the CRC-32C the entry records. */
function tensorBytes(t: BundleTensor): { bytes: Uint8Array; crc: number } {
  if (t.dtype === DT.string) {
    const elems = (t.strings ?? []).map((s) => new TextEncoder().encode(s));
    let crc = 0;
    for (const e of elems) crc = crc32c(u32le(e.byteLength), crc);
    const lengthCrc = u32le(maskCrc32c(crc));
    crc = crc32c(lengthCrc, crc);
    for (const e of elems) crc = crc32c(e, crc);
    return { bytes: Uint8Array.from([...elems.flatMap((e) => varint(e.byteLength)), ...lengthCrc, ...elems.flatMap((e) => Array.from(e))]), crc };
  }
  if (t.dtype === DT.variant) {
    // One element: an empty VariantTensorDataProto.
    const len = new Uint8Array(8);
    let crc = crc32c(len);
    const sum = u32le(maskCrc32c(crc));
    crc = crc32c(sum, crc);
    return { bytes: Uint8Array.from([...varint(0), ...sum]), crc };
  }
  const bytes = t.bytes ?? new Uint8Array(0);
  return { bytes, crc: crc32c(bytes) };
}

// ---- LevelDB table ----

function compare(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}

/** LevelDB's BytewiseComparator::FindShortestSeparator: a short key in [a, b). */
function shortestSeparator(a: Uint8Array, b: Uint8Array): Uint8Array {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  if (i < a.length && i < b.length && a[i] < 0xff && a[i] + 1 < b[i]) {
    const s = a.slice(0, i + 1);
    s[i]++;
    return s;
  }
  return a;
}

/** LevelDB's BytewiseComparator::FindShortSuccessor: a short key >= a (the last block's index key). */
function shortSuccessor(a: Uint8Array): Uint8Array {
  for (let i = 0; i < a.length; i++) {
    if (a[i] !== 0xff) {
      const s = a.slice(0, i + 1);
      s[i]++;
      return s;
    }
  }
  return a;
}

class BlockBuilder {
  private buf: number[] = [];
  private restarts: number[] = [0];
  private count = 0;
  private last = new Uint8Array(0);
  entries = 0;
  constructor(private readonly interval: number) {}
  add(key: Uint8Array, value: Uint8Array): void {
    let shared = 0;
    if (this.count < this.interval) {
      while (shared < key.length && shared < this.last.length && key[shared] === this.last[shared]) shared++;
    } else {
      this.restarts.push(this.buf.length);
      this.count = 0;
    }
    this.buf.push(...varint(shared), ...varint(key.length - shared), ...varint(value.length), ...key.subarray(shared), ...value);
    this.last = key;
    this.count++;
    this.entries++;
  }
  size(): number {
    return this.buf.length + 4 * this.restarts.length + 4;
  }
  restartCount(): number {
    return this.restarts.length;
  }
  finish(): Uint8Array {
    const out = [...this.buf];
    for (const r of this.restarts) out.push(...u32le(r));
    out.push(...u32le(this.restarts.length));
    return Uint8Array.from(out);
  }
}

/** A greedy snappy encoder: literals, and 2-byte-offset copies of earlier 4-byte matches. */
export function snappyCompress(input: Uint8Array): Uint8Array {
  const out: number[] = [...varint(input.length)];
  const table = new Map<number, number>();
  let lit = 0;
  const flushLiteral = (end: number) => {
    while (lit < end) {
      const n = Math.min(end - lit, 1 << 16);
      if (n <= 60) out.push((n - 1) << 2);
      else if (n <= 256) out.push(60 << 2, n - 1);
      else out.push(61 << 2, (n - 1) & 0xff, (n - 1) >> 8);
      out.push(...input.subarray(lit, lit + n));
      lit += n;
    }
  };
  let i = 0;
  while (i + 4 <= input.length) {
    const h = input[i] | (input[i + 1] << 8) | (input[i + 2] << 16) | (input[i + 3] << 24);
    const cand = table.get(h);
    table.set(h, i);
    if (cand !== undefined && i - cand < 65536) {
      let len = 4;
      while (i + len < input.length && len < 64 && input[cand + len] === input[i + len]) len++;
      flushLiteral(i);
      const off = i - cand;
      out.push(((len - 1) << 2) | 2, off & 0xff, off >> 8);
      i += len;
      lit = i;
    } else i++;
  }
  flushLiteral(input.length);
  return Uint8Array.from(out);
}

/** Serializes a LevelDB table holding `entries` (sorted here). */
export interface TableOptions {
  /** Data-block size at which a block is cut (default 4096, LevelDB's). */
  blockSize?: number;
  /** Entries between restart points in data blocks (default 16, LevelDB's). */
  restartInterval?: number;
  compression?: 'none' | 'snappy';
  /** Filled in with what was written, so tests can check they cover several blocks and restarts. */
  stats?: { dataBlocks: number; restarts: number };
}

export function buildTable(entries: Array<{ key: Uint8Array; value: Uint8Array }>, opts: TableOptions = {}): Uint8Array {
  const sorted = [...entries].sort((a, b) => compare(a.key, b.key));
  const blockSize = opts.blockSize ?? 4096;
  const chunks: Uint8Array[] = [];
  let pos = 0;
  const writeBlock = (raw: Uint8Array, compress: boolean) => {
    const type = compress && opts.compression === 'snappy' ? 1 : 0;
    const stored = type === 1 ? snappyCompress(raw) : raw;
    const trailer = new Uint8Array(5);
    trailer[0] = type;
    const withType = new Uint8Array(stored.length + 1);
    withType.set(stored);
    withType[stored.length] = type;
    trailer.set(u32le(maskCrc32c(crc32c(withType))), 1);
    const handle = { offset: pos, size: stored.length };
    chunks.push(stored, trailer);
    pos += stored.length + 5;
    return handle;
  };
  const countBlock = (b: BlockBuilder) => {
    if (opts.stats) {
      opts.stats.dataBlocks++;
      opts.stats.restarts += b.restartCount();
    }
  };
  const index = new BlockBuilder(1);
  let block = new BlockBuilder(opts.restartInterval ?? 16);
  let lastKey: Uint8Array | undefined;
  let pending: { offset: number; size: number } | undefined;
  for (const e of sorted) {
    if (pending) {
      index.add(shortestSeparator(lastKey!, e.key), Uint8Array.from([...varint(pending.offset), ...varint(pending.size)]));
      pending = undefined;
    }
    block.add(e.key, e.value);
    lastKey = e.key;
    if (block.size() >= blockSize) {
      countBlock(block);
      pending = writeBlock(block.finish(), true);
      block = new BlockBuilder(opts.restartInterval ?? 16);
    }
  }
  if (block.entries > 0) countBlock(block);
  if (block.entries > 0) pending = writeBlock(block.finish(), true);
  if (pending) index.add(shortSuccessor(lastKey!), Uint8Array.from([...varint(pending.offset), ...varint(pending.size)]));
  const meta = writeBlock(new BlockBuilder(16).finish(), true);
  const idx = writeBlock(index.finish(), true);
  const footer = new Uint8Array(48);
  footer.set([...varint(meta.offset), ...varint(meta.size), ...varint(idx.offset), ...varint(idx.size)]);
  new DataView(footer.buffer).setBigUint64(40, 0xdb4775248b80fb57n, true);
  chunks.push(footer);
  const out = new Uint8Array(pos + 48);
  let p = 0;
  for (const c of chunks) {
    out.set(c, p);
    p += c.length;
  }
  return out;
}

export function shardName(prefix: string, i: number, n: number): string {
  return `${prefix}.data-${String(i).padStart(5, '0')}-of-${String(n).padStart(5, '0')}`;
}

/** The files of a bundle, by name relative to the prefix's folder: `<base>.index` and the shards. */
export function bundleFiles(prefixBase: string, tensors: BundleTensor[], opts: BundleOptions = {}): Map<string, Uint8Array> {
  const numShards = opts.numShards ?? 1;
  const align = opts.alignment ?? 1;
  const shards: Array<{ chunks: Uint8Array[]; length: number }> = Array.from({ length: numShards }, () => ({ chunks: [], length: 0 }));
  const entries: Array<{ key: Uint8Array; value: Uint8Array }> = [{ key: new Uint8Array(0), value: headerProto(numShards, opts.header) }];
  tensors.forEach((t, i) => {
    const shard = opts.shardOf ? opts.shardOf(t.name, i) : i % numShards;
    const data = shards[shard];
    const pad = (align - (data.length % align)) % align;
    data.chunks.push(new Uint8Array(pad));
    data.length += pad;
    const { bytes, crc } = tensorBytes(t);
    const offset = data.length;
    data.chunks.push(bytes);
    data.length += bytes.length;
    entries.push({ key: new TextEncoder().encode(t.name), value: entryProto({ dtype: t.dtype, shape: t.shape, shard, offset, size: bytes.length, crc }) });
  });
  const files = new Map<string, Uint8Array>();
  files.set(`${prefixBase}.index`, buildTable(entries, opts));
  shards.forEach((d, i) => files.set(shardName(prefixBase, i, numShards), Buffer.concat(d.chunks)));
  return files;
}

/** Writes a bundle with prefix `prefix` (a path) and returns its files' paths. */
export function writeTfBundle(prefix: string, tensors: BundleTensor[], opts: BundleOptions = {}): string[] {
  mkdirSync(dirname(prefix), { recursive: true });
  const base = prefix.slice(dirname(prefix).length + 1);
  const paths: string[] = [];
  for (const [name, bytes] of bundleFiles(base, tensors, opts)) {
    const p = `${dirname(prefix)}/${name}`;
    writeFileSync(p, bytes);
    paths.push(p);
  }
  return paths;
}

/** A zip of `entries`, each stored or deflated (no ZIP64: small test archives only). */
export function zipBytes(entries: Array<{ name: string; data: Uint8Array; deflate?: boolean }>): Uint8Array {
  const parts: Uint8Array[] = [];
  const central: Uint8Array[] = [];
  let pos = 0;
  const le = (v: number, n: number) => {
    const b = new Uint8Array(n);
    for (let i = 0; i < n; i++) b[i] = (v >>> (8 * i)) & 0xff;
    return b;
  };
  const cat = (...xs: Uint8Array[]) => {
    const out = new Uint8Array(xs.reduce((a, x) => a + x.length, 0));
    let p = 0;
    for (const x of xs) {
      out.set(x, p);
      p += x.length;
    }
    return out;
  };
  for (const e of entries) {
    const name = new TextEncoder().encode(e.name);
    const method = e.deflate ? 8 : 0;
    const body = e.deflate ? new Uint8Array(deflateRawSync(e.data)) : e.data;
    const crc = crc32(e.data);
    const common = cat(le(20, 2), le(0, 2), le(method, 2), le(0, 2), le(0x21, 2), le(crc, 4), le(body.length, 4), le(e.data.length, 4), le(name.length, 2), le(0, 2));
    const local = cat(le(0x04034b50, 4), common, name);
    central.push(cat(le(0x02014b50, 4), le(20, 2), common, le(0, 2), le(0, 2), le(0, 2), le(0, 4), le(pos, 4), name));
    parts.push(local, body);
    pos += local.length + body.length;
  }
  const dir = cat(...central);
  const end = cat(le(0x06054b50, 4), le(0, 2), le(0, 2), le(entries.length, 2), le(entries.length, 2), le(dir.length, 4), le(pos, 4), le(0, 2));
  return cat(...parts, dir, end);
}
