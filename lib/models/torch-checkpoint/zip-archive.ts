/**
 * The central directory of a zip archive, read from an open file with positioned reads: entry
 * names, where each entry's bytes begin in the file, their sizes and compression method. Enough
 * to read what `torch.save` writes (since PyTorch 1.6: a zip whose entries are stored, not
 * compressed, each aligned to 64 bytes by padding in the local header's extra field), including
 * ZIP64 archives (files over 4 GiB or with more than 65,535 entries).
 *
 * Layout (PKWARE APPNOTE 6.3, sections 4.3.6-4.3.16 and 4.5.3), all integers little-endian:
 *   local header   sig 0x04034b50, ..., method @8, sizes @18/@22, name length @26, extra length @28
 *   central entry  sig 0x02014b50, flags @8, method @10, compressed @20, uncompressed @24,
 *                  name/extra/comment lengths @28/@30/@32, local header offset @42
 *   end record     sig 0x06054b50, entries @10, directory size @12, directory offset @16 (22 bytes + comment)
 *   ZIP64 locator  sig 0x07064b50 (20 bytes, just before the end record), ZIP64 end record offset @8
 *   ZIP64 end      sig 0x06064b50, entries @32, directory size @40, directory offset @48
 *   ZIP64 extra    id 0x0001 in an entry's extra field: the 8-byte uncompressed size, compressed
 *                  size and local header offset, each present only when the 32-bit field is 0xFFFFFFFF
 * Every offset and size is checked against the file's length; a damaged archive is an InputError
 * naming the file.
 */
import { inflateRawSync } from 'node:zlib';
import { InputError } from '../../util/errors.js';
import { readExactly } from '../safetensors.js';

const SIG_LOCAL = 0x04034b50;
const SIG_CENTRAL = 0x02014b50;
const SIG_END = 0x06054b50;
const SIG_ZIP64_LOCATOR = 0x07064b50;
const SIG_ZIP64_END = 0x06064b50;
const END_RECORD_BYTES = 22;
/** The end record's comment is at most 65,535 bytes. */
const END_SEARCH_BYTES = END_RECORD_BYTES + 0xffff;
const METHOD_STORED = 0;
const METHOD_DEFLATE = 8;

export interface ZipEntry {
  name: string;
  /** 0 stored, 8 deflate. */
  method: number;
  compressedSize: number;
  size: number;
  localHeaderOffset: number;
  /** General purpose flags (bit 0: encrypted). */
  flags: number;
}

function u16(b: Uint8Array, at: number): number {
  return b[at] | (b[at + 1] << 8);
}
function u32(b: Uint8Array, at: number): number {
  return (b[at] | (b[at + 1] << 8) | (b[at + 2] << 16) | (b[at + 3] << 24)) >>> 0;
}
function u64(b: Uint8Array, at: number, file: string, what: string): number {
  const v = new DataView(b.buffer, b.byteOffset + at, 8).getBigUint64(0, true);
  if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new InputError(`corrupt zip archive: ${what} ${v} is beyond 2^53`, { file });
  return Number(v);
}

/** True when the first bytes are a zip local header (what `torch.save` writes since 1.6). */
export function looksLikeZip(head: Uint8Array): boolean {
  return head.byteLength >= 4 && u32(head, 0) === SIG_LOCAL;
}

/** The entries of a zip archive in an open file of `fileSize` bytes. */
export class ZipArchive {
  readonly entries: ReadonlyMap<string, ZipEntry>;

  private constructor(
    private readonly fd: number,
    readonly file: string,
    readonly fileSize: number,
    entries: Map<string, ZipEntry>,
  ) {
    this.entries = entries;
  }

  static read(fd: number, file: string, fileSize: number): ZipArchive {
    const bad = (msg: string) => new InputError(`corrupt zip archive: ${msg}`, { file });
    // The end record sits in the last 22 + comment bytes; search backwards for its signature.
    const tailStart = Math.max(0, fileSize - END_SEARCH_BYTES);
    const tail = readExactly(fd, tailStart, fileSize - tailStart, file, 'the end of the zip archive');
    let end = -1;
    for (let i = tail.byteLength - END_RECORD_BYTES; i >= 0; i--) {
      if (u32(tail, i) === SIG_END && i + END_RECORD_BYTES + u16(tail, i + 20) === tail.byteLength) {
        end = i;
        break;
      }
    }
    if (end < 0) throw bad('no end-of-central-directory record (the file is cut short or not a zip)');
    let count = u16(tail, end + 10);
    let dirSize = u32(tail, end + 12);
    let dirOffset = u32(tail, end + 16);
    const saturated = count === 0xffff || dirSize === 0xffffffff || dirOffset === 0xffffffff;
    // ZIP64: a locator immediately before the end record points at the ZIP64 end record. Writers
    // add it when a field overflows (then the 32-bit fields hold 0xFFFF...), and some (CPython's
    // zipfile) also when they need not; its values win whenever it is there, as CPython reads it.
    const locatorAt = tailStart + end - 20;
    const locator = locatorAt >= 0 ? readExactly(fd, locatorAt, 20, file, 'the ZIP64 locator') : undefined;
    if (locator && u32(locator, 0) === SIG_ZIP64_LOCATOR) {
      const zip64At = u64(locator, 8, file, 'ZIP64 end record offset');
      if (zip64At + 56 > fileSize) throw bad(`ZIP64 end record at byte ${zip64At} lies past the end of the file (${fileSize} bytes)`);
      const z = readExactly(fd, zip64At, 56, file, 'the ZIP64 end record');
      if (u32(z, 0) !== SIG_ZIP64_END) throw bad(`no ZIP64 end record at byte ${zip64At}`);
      count = u64(z, 32, file, 'entry count');
      dirSize = u64(z, 40, file, 'central directory size');
      dirOffset = u64(z, 48, file, 'central directory offset');
    } else if (saturated) {
      throw bad('the end record asks for ZIP64 (a field is 0xFFFF...) but the ZIP64 locator is missing');
    }
    if (dirOffset + dirSize > fileSize) throw bad(`central directory (bytes ${dirOffset}..${dirOffset + dirSize}) lies past the end of the file (${fileSize} bytes)`);
    const dir = readExactly(fd, dirOffset, dirSize, file, 'the central directory');
    const entries = new Map<string, ZipEntry>();
    let p = 0;
    for (let i = 0; i < count; i++) {
      if (p + 46 > dir.byteLength || u32(dir, p) !== SIG_CENTRAL) throw bad(`central directory entry ${i} of ${count} is missing or damaged`);
      const flags = u16(dir, p + 8);
      const method = u16(dir, p + 10);
      let compressedSize = u32(dir, p + 20);
      let size = u32(dir, p + 24);
      const nameLen = u16(dir, p + 28);
      const extraLen = u16(dir, p + 30);
      const commentLen = u16(dir, p + 32);
      let localHeaderOffset = u32(dir, p + 42);
      if (p + 46 + nameLen + extraLen + commentLen > dir.byteLength) throw bad(`central directory entry ${i} runs past the directory`);
      const name = new TextDecoder('utf-8').decode(dir.subarray(p + 46, p + 46 + nameLen));
      // ZIP64 extended information: 8-byte values for the 32-bit fields that hold 0xFFFFFFFF, in order.
      const extra = dir.subarray(p + 46 + nameLen, p + 46 + nameLen + extraLen);
      for (let q = 0; q + 4 <= extra.byteLength; ) {
        const id = u16(extra, q);
        const len = u16(extra, q + 2);
        if (id === 0x0001) {
          let r = q + 4;
          const take = (what: string) => {
            if (r + 8 > q + 4 + len) throw bad(`entry '${name}': ZIP64 extra field lacks the ${what}`);
            const v = u64(extra, r, file, `${name} ${what}`);
            r += 8;
            return v;
          };
          if (size === 0xffffffff) size = take('uncompressed size');
          if (compressedSize === 0xffffffff) compressedSize = take('compressed size');
          if (localHeaderOffset === 0xffffffff) localHeaderOffset = take('local header offset');
        }
        q += 4 + len;
      }
      if (entries.has(name)) throw bad(`entry '${name}' appears twice`);
      entries.set(name, { name, method, compressedSize, size, localHeaderOffset, flags });
      p += 46 + nameLen + extraLen + commentLen;
    }
    return new ZipArchive(fd, file, fileSize, entries);
  }

  /** Absolute position of an entry's first data byte (after its local header, name and extra field). */
  dataOffset(e: ZipEntry): number {
    if (e.localHeaderOffset + 30 > this.fileSize) throw new InputError(`corrupt zip archive: entry '${e.name}' has its local header past the end of the file`, { file: this.file });
    const h = readExactly(this.fd, e.localHeaderOffset, 30, this.file, `the local header of '${e.name}'`);
    if (u32(h, 0) !== SIG_LOCAL) throw new InputError(`corrupt zip archive: no local header for entry '${e.name}' at byte ${e.localHeaderOffset}`, { file: this.file });
    const at = e.localHeaderOffset + 30 + u16(h, 26) + u16(h, 28);
    if (at + e.compressedSize > this.fileSize) {
      throw new InputError(`truncated zip archive: entry '${e.name}' (bytes ${at}..${at + e.compressedSize}) ends past the end of the file (${this.fileSize} bytes)`, { file: this.file });
    }
    return at;
  }

  /** The whole content of a (small) entry: stored, or deflated as zip writers other than PyTorch's may do. */
  readEntry(e: ZipEntry): Uint8Array {
    if (e.flags & 1) throw new InputError(`zip entry '${e.name}' is encrypted`, { file: this.file });
    const raw = readExactly(this.fd, this.dataOffset(e), e.compressedSize, this.file, `zip entry '${e.name}'`);
    if (e.method === METHOD_STORED) return raw;
    if (e.method === METHOD_DEFLATE) {
      let out: Buffer;
      try {
        // Bounded by the size the directory states, so a damaged entry cannot inflate without limit.
        out = inflateRawSync(raw, { maxOutputLength: Math.max(1, e.size) });
      } catch (err) {
        throw new InputError(`corrupt zip archive: entry '${e.name}' does not inflate to its ${e.size} bytes (${(err as Error).message})`, { file: this.file });
      }
      if (out.byteLength !== e.size) throw new InputError(`corrupt zip archive: entry '${e.name}' inflates to ${out.byteLength} bytes, the directory says ${e.size}`, { file: this.file });
      return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
    }
    throw new InputError(`zip entry '${e.name}' uses compression method ${e.method}; only stored (0) and deflate (8) are read`, { file: this.file });
  }
}
