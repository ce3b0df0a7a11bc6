/**
 * Writes stored (uncompressed) zip archives for tests: crafted PyTorch checkpoints, and ZIP64
 * archives whose entries lie beyond 4 GiB in a sparse file (positioned writes leave the gaps
 * unwritten, so a 5 GB archive costs a few KB of disk). Layout per PKWARE APPNOTE 6.3 (local
 * headers, central directory, ZIP64 extra fields, ZIP64 end record and locator, end record);
 * checked once against CPython's zipfile, which lists and reads such an archive back.
 */
import { closeSync, ftruncateSync, openSync, writeSync } from 'node:fs';
import { crc32 } from 'node:zlib';

export interface ZipEntryToWrite {
  name: string;
  data: Uint8Array;
  /** Where the local header goes (default: right after the previous entry); must not go backwards. */
  at?: number;
}

const U32_MAX = 0xffffffff;

function le(n: number, bytes: number): Buffer {
  const b = Buffer.alloc(bytes);
  if (bytes === 8) b.writeBigUInt64LE(BigInt(n));
  else if (bytes === 4) b.writeUInt32LE(n >>> 0);
  else b.writeUInt16LE(n);
  return b;
}

/**
 * Writes `entries` as a stored zip at `path`. `zip64: true` writes ZIP64 records for every entry
 * and the end of the directory (as a writer must once anything passes 4 GiB); otherwise they are
 * used only where a value does not fit in 32 bits.
 */
export function writeZip(path: string, entries: ZipEntryToWrite[], opts: { zip64?: boolean } = {}): number {
  const fd = openSync(path, 'w');
  try {
    let pos = 0;
    const central: Buffer[] = [];
    for (const e of entries) {
      const at = e.at ?? pos;
      if (at < pos) throw new Error(`entry ${e.name} at ${at} would overlap the previous one (ends at ${pos})`);
      const name = Buffer.from(e.name, 'utf8');
      const crc = crc32(e.data);
      const size = e.data.byteLength;
      const big = opts.zip64 || size >= U32_MAX || at >= U32_MAX;
      // Local header: sizes go into a ZIP64 extra field when they do not fit (or when asked).
      const localExtra = big ? Buffer.concat([le(0x0001, 2), le(16, 2), le(size, 8), le(size, 8)]) : Buffer.alloc(0);
      const local = Buffer.concat([
        le(0x04034b50, 4), le(big ? 45 : 20, 2), le(0, 2), le(0, 2), le(0, 2), le(0x21, 2), le(crc, 4),
        le(big ? U32_MAX : size, 4), le(big ? U32_MAX : size, 4), le(name.length, 2), le(localExtra.length, 2), name, localExtra,
      ]);
      writeSync(fd, local, 0, local.length, at);
      writeSync(fd, e.data, 0, size, at + local.length);
      pos = at + local.length + size;
      const extra = big ? Buffer.concat([le(0x0001, 2), le(24, 2), le(size, 8), le(size, 8), le(at, 8)]) : Buffer.alloc(0);
      central.push(
        Buffer.concat([
          le(0x02014b50, 4), le(big ? 45 : 20, 2), le(big ? 45 : 20, 2), le(0, 2), le(0, 2), le(0, 2), le(0x21, 2), le(crc, 4),
          le(big ? U32_MAX : size, 4), le(big ? U32_MAX : size, 4), le(name.length, 2), le(extra.length, 2), le(0, 2), le(0, 2),
          le(0, 2), le(0, 4), le(big ? U32_MAX : at, 4), name, extra,
        ]),
      );
    }
    const dir = Buffer.concat(central);
    const dirAt = pos;
    writeSync(fd, dir, 0, dir.length, dirAt);
    pos += dir.length;
    const big = opts.zip64 || dirAt >= U32_MAX || entries.length >= 0xffff;
    if (big) {
      const zip64EndAt = pos;
      const zip64End = Buffer.concat([
        le(0x06064b50, 4), le(44, 8), le(45, 2), le(45, 2), le(0, 4), le(0, 4),
        le(entries.length, 8), le(entries.length, 8), le(dir.length, 8), le(dirAt, 8),
      ]);
      const locator = Buffer.concat([le(0x07064b50, 4), le(0, 4), le(zip64EndAt, 8), le(1, 4)]);
      const tail = Buffer.concat([zip64End, locator]);
      writeSync(fd, tail, 0, tail.length, pos);
      pos += tail.length;
    }
    const end = Buffer.concat([
      le(0x06054b50, 4), le(0, 2), le(0, 2), le(big ? 0xffff : entries.length, 2), le(big ? 0xffff : entries.length, 2),
      le(big ? U32_MAX : dir.length, 4), le(big ? U32_MAX : dirAt, 4), le(0, 2),
    ]);
    writeSync(fd, end, 0, end.length, pos);
    pos += end.length;
    ftruncateSync(fd, pos);
    return pos;
  } finally {
    closeSync(fd);
  }
}
