/**
 * Extracting a tar archive (senteval.tar) with no dependency: POSIX ustar headers, GNU long
 * names ('L'), PAX extended headers ('x': path, size) and old GNU headers. Regular files and
 * directories are written; links, devices and FIFOs are skipped and reported (the data sets need
 * none, and a link could point outside the destination). A path that is absolute or climbs out
 * with '..' is refused, a header whose checksum does not match or an archive that ends inside an
 * entry is an error naming the byte offset, so a corrupt download never half-extracts silently.
 */
import { mkdir, open, stat, type FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { InputError } from '../util/errors.js';

const BLOCK = 512;
const COPY_CHUNK = 1 << 20;

export interface TarExtractResult {
  /** Regular files written (relative paths). */
  files: string[];
  directories: number;
  /** Entries not extracted, with their type flag. */
  skipped: { path: string; type: string }[];
}

function cString(b: Uint8Array): string {
  const end = b.indexOf(0);
  return Buffer.from(end < 0 ? b : b.subarray(0, end)).toString('utf8');
}

/** A numeric header field: octal text, or GNU base-256 when the top bit of the first byte is set. */
function numberField(b: Uint8Array, what: string, file: string, offset: number): number {
  if (b[0] & 0x80) {
    let v = b[0] & 0x7f;
    for (let i = 1; i < b.length; i++) v = v * 256 + b[i];
    return v;
  }
  const s = cString(b).trim();
  if (s === '') return 0;
  if (!/^[0-7]+$/.test(s)) throw new InputError(`corrupt tar header at byte ${offset}: ${what} field '${s}' is not octal`, { file });
  return parseInt(s, 8);
}

function checksumOk(h: Uint8Array, stored: number): boolean {
  let unsigned = 0;
  let signed = 0;
  for (let i = 0; i < BLOCK; i++) {
    const v = i >= 148 && i < 156 ? 0x20 : h[i];
    unsigned += v;
    signed += v > 127 ? v - 256 : v;
  }
  return stored === unsigned || stored === signed;
}

/** The PAX records `len key=value\n` of an extended header. */
function paxRecords(data: Uint8Array, file: string, offset: number): Record<string, string> {
  const out: Record<string, string> = {};
  let i = 0;
  while (i < data.length) {
    if (data[i] === 0) break;
    const space = data.indexOf(0x20, i);
    const len = space < 0 ? NaN : Number(Buffer.from(data.subarray(i, space)).toString('ascii'));
    if (!Number.isInteger(len) || len <= 0 || i + len > data.length) {
      throw new InputError(`corrupt PAX header at byte ${offset}: bad record length`, { file });
    }
    const rec = Buffer.from(data.subarray(space + 1, i + len - 1)).toString('utf8');
    const eq = rec.indexOf('=');
    if (eq > 0) out[rec.slice(0, eq)] = rec.slice(eq + 1);
    i += len;
  }
  return out;
}

/** The archive path as a safe relative path, or '' for the archive root ('./'). */
function safePath(name: string, file: string, offset: number): string {
  if (name.startsWith('/') || /^[A-Za-z]:/.test(name)) {
    throw new InputError(`unsafe path '${name}' at byte ${offset}: absolute paths are not extracted`, { file });
  }
  const parts = name.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.includes('..')) throw new InputError(`unsafe path '${name}' at byte ${offset}: '..' would leave the destination`, { file });
  return parts.join('/');
}

async function readExactly(fh: FileHandle, length: number, position: number): Promise<Buffer> {
  const buf = Buffer.alloc(length);
  let got = 0;
  while (got < length) {
    const { bytesRead } = await fh.read(buf, got, length - got, position + got);
    if (bytesRead === 0) break;
    got += bytesRead;
  }
  return got === length ? buf : buf.subarray(0, got);
}

async function copyRange(src: FileHandle, start: number, length: number, dest: string): Promise<void> {
  await mkdir(dirname(dest), { recursive: true });
  const out = await open(dest, 'w');
  try {
    for (let done = 0; done < length; ) {
      const n = Math.min(COPY_CHUNK, length - done);
      const chunk = await readExactly(src, n, start + done);
      await out.write(chunk);
      done += n;
    }
  } finally {
    await out.close();
  }
}

/** Extracts every regular file and directory of `tarFile` under `destDir`. */
export async function extractTar(tarFile: string, destDir: string): Promise<TarExtractResult> {
  const size = (await stat(tarFile)).size;
  const fh = await open(tarFile, 'r');
  const result: TarExtractResult = { files: [], directories: 0, skipped: [] };
  try {
    let pos = 0;
    let longName: string | undefined;
    let pax: Record<string, string> = {};
    for (;;) {
      if (pos + BLOCK > size) {
        if (pos === size && pos > 0) break; // no end-of-archive blocks: tolerated, as GNU tar does
        throw new InputError(`truncated tar archive: it ends at byte ${size}, inside the header at byte ${pos}`, { file: tarFile });
      }
      const h = await readExactly(fh, BLOCK, pos);
      if (h.every((b) => b === 0)) break;
      const storedSum = numberField(h.subarray(148, 156), 'checksum', tarFile, pos);
      if (!checksumOk(h, storedSum)) throw new InputError(`corrupt tar header at byte ${pos}: checksum mismatch (not a tar file, or damaged)`, { file: tarFile });
      const type = String.fromCharCode(h[156] || 0x30);
      const magic = Buffer.from(h.subarray(257, 263)).toString('latin1');
      let name = cString(h.subarray(0, 100));
      if (magic === 'ustar\0') {
        const prefix = cString(h.subarray(345, 500));
        if (prefix) name = `${prefix}/${name}`;
      }
      let dataSize = numberField(h.subarray(124, 136), 'size', tarFile, pos);
      if (pax.size !== undefined && /^\d+$/.test(pax.size)) dataSize = Number(pax.size);
      const dataStart = pos + BLOCK;
      if (dataStart + dataSize > size) {
        throw new InputError(`truncated tar archive: entry '${name}' at byte ${pos} needs ${dataSize} bytes, the file ends first`, { file: tarFile });
      }
      const next = dataStart + Math.ceil(dataSize / BLOCK) * BLOCK;
      if (type === 'L' || type === 'x' || type === 'g' || type === 'K') {
        const data = await readExactly(fh, dataSize, dataStart);
        if (type === 'L') longName = cString(data);
        else if (type === 'x') pax = paxRecords(data, tarFile, pos);
        pos = next;
        continue;
      }
      const path = safePath(pax.path ?? longName ?? name, tarFile, pos);
      longName = undefined;
      pax = {};
      if (type === '0' || type === '7') {
        if (path === '') throw new InputError(`tar entry at byte ${pos} is a file without a name`, { file: tarFile });
        await copyRange(fh, dataStart, dataSize, join(destDir, path));
        result.files.push(path);
      } else if (type === '5') {
        await mkdir(join(destDir, path), { recursive: true });
        result.directories++;
      } else {
        result.skipped.push({ path, type });
      }
      pos = next;
    }
  } finally {
    await fh.close();
  }
  return result;
}
