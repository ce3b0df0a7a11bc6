/**
 * Reads a LevelDB-format sorted table ("SSTable"), the format of a TensorFlow tensor bundle's
 * `.index` file (tensorflow/core/lib/io/{format,block,table}.cc follow LevelDB's table format,
 * doc/table_format.md). The index of a checkpoint is small (one entry per variable), so the whole
 * file is read into memory and every entry returned, in key order.
 *
 * Layout, integers little-endian, varints as protobuf's:
 *   [data block 0][trailer] ... [data block n-1][trailer] [metaindex block][trailer]
 *   [index block][trailer] [footer: 48 bytes]
 *   footer   metaindex handle, index handle (each varint64 offset + varint64 size), zero padding
 *            to 40 bytes, then the magic number 0xdb4775248b80fb57 as a fixed64
 *   trailer  1 byte compression type (0 none, 1 snappy) + fixed32 masked CRC-32C of the block's
 *            stored bytes followed by that type byte
 *   block    entries, then the restart array (fixed32 offsets of entries stored with their whole
 *            key) and its fixed32 count. Each entry: varint32 shared (bytes taken from the previous
 *            key), varint32 non_shared, varint32 value_length, the key's non-shared bytes, the value.
 *   index    one entry per data block: a key >= the block's last key and < the next block's first
 *            one, valued by the block's handle
 * Keys are compared bytewise and must increase strictly through the table; every restart point
 * must be an entry with shared = 0. Any violation, a checksum mismatch, an unknown compression
 * type or a handle outside the file is an InputError naming the file and the block.
 */
import { InputError } from '../../util/errors.js';
import { crc32c, unmaskCrc32c } from '../../util/crc32c.js';
import { SnappyError, snappyDecompress } from './snappy.js';

export const TABLE_MAGIC = 0xdb4775248b80fb57n;
export const FOOTER_BYTES = 48;
/** Block trailer: compression type byte + masked CRC-32C. */
export const BLOCK_TRAILER_BYTES = 5;
export const COMPRESSION_NONE = 0;
export const COMPRESSION_SNAPPY = 1;

export interface TableEntry {
  /** The key's raw bytes (tensor names are UTF-8; the bundle header's key is empty). */
  key: Uint8Array;
  value: Uint8Array;
}

interface BlockHandle {
  offset: number;
  size: number;
}

/** A cursor over varint-coded bytes that reports problems as InputErrors about `what`. */
class Cursor {
  constructor(
    readonly bytes: Uint8Array,
    public at: number,
    private readonly fail: (msg: string) => InputError,
  ) {}

  varint(what: string, maxBits: 32 | 64): number {
    let v = 0;
    for (let shift = 0; ; shift += 7) {
      if (this.at >= this.bytes.byteLength) throw this.fail(`${what} is cut short (varint at byte ${this.at})`);
      if (shift >= maxBits) throw this.fail(`${what} is a varint longer than ${maxBits} bits`);
      const b = this.bytes[this.at++];
      v += (b & 0x7f) * 2 ** shift;
      if (!(b & 0x80)) break;
    }
    if (v > Number.MAX_SAFE_INTEGER) throw this.fail(`${what} ${v} is beyond 2^53`);
    return v;
  }
}

function u32(b: Uint8Array, at: number): number {
  return (b[at] | (b[at + 1] << 8) | (b[at + 2] << 16) | (b[at + 3] << 24)) >>> 0;
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.byteLength, b.byteLength);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.byteLength - b.byteLength;
}

/** A key as text for messages (tensor names are UTF-8; anything else is shown escaped). */
export function keyText(key: Uint8Array): string {
  return JSON.stringify(new TextDecoder('utf-8').decode(key));
}

/** What a read found, for diagnostics and tests. */
export interface TableReadStats {
  dataBlocks: number;
  /** Data and index blocks stored snappy-compressed. */
  snappyBlocks: number;
}

/** Every entry of the table in `bytes` (the whole `.index` file), in key order. */
export function readTableEntries(bytes: Uint8Array, file: string, stats?: TableReadStats): TableEntry[] {
  const fail = (msg: string) => new InputError(`corrupt tensor-bundle index (LevelDB table): ${msg}`, { file });
  if (bytes.byteLength < FOOTER_BYTES) throw fail(`the file has ${bytes.byteLength} bytes, fewer than the ${FOOTER_BYTES}-byte footer (truncated?)`);
  const footerAt = bytes.byteLength - FOOTER_BYTES;
  const magic = new DataView(bytes.buffer, bytes.byteOffset + footerAt + 40, 8).getBigUint64(0, true);
  if (magic !== TABLE_MAGIC) {
    throw fail(`wrong magic number 0x${magic.toString(16).padStart(16, '0')} at the end of the file, expected 0x${TABLE_MAGIC.toString(16)} (truncated, or not a TensorFlow .index file)`);
  }
  const footer = new Cursor(bytes.subarray(footerAt, footerAt + 40), 0, fail);
  const handle = (what: string): BlockHandle => {
    const offset = footer.varint(`the footer's ${what} offset`, 64);
    const size = footer.varint(`the footer's ${what} size`, 64);
    return { offset, size };
  };
  handle('metaindex'); // holds only filter-policy names, which a full scan does not need
  const indexHandle = handle('index block');
  const index = readBlock(bytes, indexHandle, footerAt, 'the index block', fail, stats);
  const out: TableEntry[] = [];
  let previous: Uint8Array | undefined;
  for (const [i, ie] of blockEntries(index, 'the index block', fail).entries()) {
    const c = new Cursor(ie.value, 0, fail);
    const h = { offset: c.varint(`index entry ${i}'s block offset`, 64), size: c.varint(`index entry ${i}'s block size`, 64) };
    const what = `data block ${i} (bytes ${h.offset}..${h.offset + h.size})`;
    const entries = blockEntries(readBlock(bytes, h, footerAt, what, fail, stats), what, fail);
    if (stats) stats.dataBlocks++;
    for (const e of entries) {
      if (previous && compareBytes(previous, e.key) >= 0) throw fail(`${what}: key ${keyText(e.key)} does not sort after ${keyText(previous)}`);
      if (compareBytes(e.key, ie.key) > 0) throw fail(`${what}: key ${keyText(e.key)} sorts after the index's separator ${keyText(ie.key)}`);
      previous = e.key;
      out.push(e);
    }
  }
  return out;
}

/** A block's contents after its checksum is verified and it is decompressed. */
function readBlock(bytes: Uint8Array, h: BlockHandle, limit: number, what: string, fail: (m: string) => InputError, stats?: TableReadStats): Uint8Array {
  if (h.offset + h.size + BLOCK_TRAILER_BYTES > limit) {
    throw fail(`${what} (bytes ${h.offset}..${h.offset + h.size} + ${BLOCK_TRAILER_BYTES}-byte trailer) runs past the table's data, which ends at byte ${limit}`);
  }
  const stored = bytes.subarray(h.offset, h.offset + h.size);
  const type = bytes[h.offset + h.size];
  const expected = unmaskCrc32c(u32(bytes, h.offset + h.size + 1));
  const actual = crc32c(bytes.subarray(h.offset, h.offset + h.size + 1));
  if (actual !== expected) {
    throw fail(`${what} fails its checksum: the trailer says CRC-32C ${hex(expected)}, the bytes give ${hex(actual)}`);
  }
  if (type === COMPRESSION_NONE) return stored;
  if (type === COMPRESSION_SNAPPY) {
    if (stats) stats.snappyBlocks++;
    try {
      return snappyDecompress(stored);
    } catch (e) {
      if (e instanceof SnappyError) throw fail(`${what} is snappy-compressed and does not decompress: ${e.message}`);
      throw e;
    }
  }
  throw fail(`${what} has compression type ${type}; only 0 (none) and 1 (snappy) exist in this format`);
}

function hex(n: number): string {
  return `0x${n.toString(16).padStart(8, '0')}`;
}

/** The entries of one block, keys rebuilt from their shared prefixes, restart points checked. */
function blockEntries(block: Uint8Array, what: string, fail: (m: string) => InputError): TableEntry[] {
  if (block.byteLength < 4) throw fail(`${what} has ${block.byteLength} bytes, too few for its restart count`);
  const restarts = u32(block, block.byteLength - 4);
  const restartsAt = block.byteLength - 4 - 4 * restarts;
  if (restarts === 0 || restartsAt < 0) throw fail(`${what} states ${restarts} restart points, which do not fit its ${block.byteLength} bytes`);
  const restartOffsets = new Set<number>();
  for (let r = 0; r < restarts; r++) {
    const off = u32(block, restartsAt + 4 * r);
    if (off >= Math.max(1, restartsAt)) throw fail(`${what}: restart point ${r} at byte ${off} lies outside its ${restartsAt} bytes of entries`);
    restartOffsets.add(off);
  }
  if (restartsAt > 0 && !restartOffsets.has(0)) throw fail(`${what}: no restart point at its first entry`);
  const c = new Cursor(block.subarray(0, restartsAt), 0, fail);
  const out: TableEntry[] = [];
  let key = new Uint8Array(0);
  const seen = new Set<number>();
  while (c.at < restartsAt) {
    const start = c.at;
    const shared = c.varint(`${what}: the shared length of the entry at byte ${start}`, 32);
    const nonShared = c.varint(`${what}: the key length of the entry at byte ${start}`, 32);
    const valueLength = c.varint(`${what}: the value length of the entry at byte ${start}`, 32);
    if (restartOffsets.has(start) && shared !== 0) throw fail(`${what}: the entry at restart point byte ${start} shares ${shared} bytes with the previous key (a restart must store its whole key)`);
    if (shared > key.byteLength) throw fail(`${what}: the entry at byte ${start} shares ${shared} bytes of a ${key.byteLength}-byte previous key`);
    if (c.at + nonShared + valueLength > restartsAt) throw fail(`${what}: the entry at byte ${start} runs past the block's entries (byte ${restartsAt})`);
    const next = new Uint8Array(shared + nonShared);
    next.set(key.subarray(0, shared));
    next.set(block.subarray(c.at, c.at + nonShared), shared);
    c.at += nonShared;
    key = next;
    out.push({ key, value: block.subarray(c.at, c.at + valueLength) });
    c.at += valueLength;
    seen.add(start);
  }
  for (const off of restartOffsets) {
    if (restartsAt > 0 && !seen.has(off)) throw fail(`${what}: restart point at byte ${off} is not the start of an entry`);
  }
  return out;
}
