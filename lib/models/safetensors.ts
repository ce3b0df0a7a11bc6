/**
 * safetensors: an 8-byte little-endian header length N, N bytes of JSON
 * `{name: {dtype, shape, data_offsets: [begin, end]}, "__metadata__"?: {...}}`, then the raw
 * little-endian tensor bytes (offsets relative to the end of the header).
 *
 * Files are read one tensor at a time: `openSafetensors` reads the header only, and each tensor is
 * then read with positioned reads at its own offset (`fs.readSync`, positions as plain numbers,
 * exact up to 2^53). Nothing ever holds the whole file, so a 10 GB LLaMA-2-7B shard works where
 * `readFileSync` fails on Node 20 (ERR_FS_FILE_TOO_LARGE above 2 GiB), and a loader can keep peak
 * memory at one tensor. `readRaw` gives a tensor's stored dtype and bytes (a 16-bit base kept as
 * 16 bits); `read` converts floating tensors (F64, F32, F16, BF16) to Float32Array and integer
 * tensors to Int32Array (I64/U64 values must fit in 32 bits; BERT position ids and masks do).
 * `readSafetensors` is the eager form (every tensor, read one by one).
 *
 * Every inconsistency is an InputError naming the file and the tensor: a header that is not JSON, an
 * unknown dtype, a shape that does not match the byte span, a tensor that overlaps another or ends
 * past the end of the file (a truncated download), so a broken file is reported as such instead of
 * being decoded as garbage weights. Gaps between tensors are tolerated (the reference writer leaves
 * none, and a gap cannot make a tensor's bytes wrong).
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { writeFileAtomicSync } from '../util/atomic-write.js';
import { InputError } from '../util/errors.js';

export type SafetensorsDtype = 'F64' | 'F32' | 'F16' | 'BF16' | 'I64' | 'I32' | 'I16' | 'I8' | 'U8' | 'U16' | 'U32' | 'U64' | 'BOOL';

/** Bytes per element of each dtype. */
export const DTYPE_BYTES: Readonly<Record<SafetensorsDtype, number>> = {
  F64: 8, F32: 4, F16: 2, BF16: 2, I64: 8, I32: 4, I16: 2, I8: 1, U8: 1, U16: 2, U32: 4, U64: 8, BOOL: 1,
};

export interface TensorEntry {
  name: string;
  dtype: SafetensorsDtype;
  shape: number[];
  /** Float32Array for floating dtypes, Int32Array for integer and bool dtypes. */
  data: Float32Array | Int32Array;
}

/** A tensor as stored: its dtype and its little-endian bytes in row-major order, not converted. */
export interface RawTensor {
  name: string;
  dtype: SafetensorsDtype;
  shape: number[];
  bytes: Uint8Array;
}

/** Where a tensor lies in a safetensors file. */
export interface SafetensorsTensorInfo {
  name: string;
  dtype: SafetensorsDtype;
  shape: number[];
  /** Absolute byte position of the tensor's first byte in the file. */
  byteOffset: number;
  byteLength: number;
}

export interface SafetensorsFile {
  tensors: Map<string, TensorEntry>;
  metadata: Record<string, string>;
}

/** Largest header we accept; real files have headers of kilobytes to a few megabytes. */
const MAX_HEADER_BYTES = 100 * 1024 * 1024;
/** Largest single read; `fs.readSync` refuses lengths of 2 GiB and more. */
const READ_CHUNK = 1 << 29;

export function isSafetensorsDtype(d: unknown): d is SafetensorsDtype {
  return typeof d === 'string' && Object.prototype.hasOwnProperty.call(DTYPE_BYTES, d);
}

function f16ToF32(h: number): number {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const m = h & 0x3ff;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 31) return m ? Number.NaN : s * Number.POSITIVE_INFINITY;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}

/** Number of elements of a shape (1 for a scalar). */
export function elementCount(shape: readonly number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

/**
 * Converts stored little-endian bytes to Float32Array (floating dtypes) or Int32Array (integer and
 * bool dtypes). `file` and `name` are for error messages. F32/I32 bytes that are a whole buffer of
 * their own (as `readRaw` returns them) are viewed, not copied.
 */
export function decodeTensorBytes(bytes: Uint8Array, dtype: SafetensorsDtype, shape: readonly number[], file: string, name: string): Float32Array | Int32Array {
  const n = elementCount(shape);
  if (bytes.byteLength !== n * DTYPE_BYTES[dtype]) {
    throw new InputError(`tensor '${name}': ${dtype}${JSON.stringify(shape)} needs ${n * DTYPE_BYTES[dtype]} bytes, got ${bytes.byteLength}`, { file });
  }
  // Typed-array views need aligned offsets, and a view would keep (and share) a caller's larger
  // buffer: bytes that are not a whole buffer of their own are copied first.
  const owned = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
  const aligned = owned ? bytes : new Uint8Array(bytes);
  const dv = new DataView(aligned.buffer, aligned.byteOffset, aligned.byteLength);
  switch (dtype) {
    case 'F32':
      return new Float32Array(aligned.buffer, aligned.byteOffset, n);
    case 'F64': {
      const out = new Float32Array(n);
      for (let i = 0; i < n; i++) out[i] = dv.getFloat64(i * 8, true);
      return out;
    }
    case 'F16': {
      const out = new Float32Array(n);
      for (let i = 0; i < n; i++) out[i] = f16ToF32(dv.getUint16(i * 2, true));
      return out;
    }
    case 'BF16': {
      // bf16 is the top half of an f32.
      const bits = new Uint32Array(n);
      for (let i = 0; i < n; i++) bits[i] = dv.getUint16(i * 2, true) << 16;
      return new Float32Array(bits.buffer);
    }
    case 'I32':
      return new Int32Array(aligned.buffer, aligned.byteOffset, n);
    case 'I16': {
      const out = new Int32Array(n);
      for (let i = 0; i < n; i++) out[i] = dv.getInt16(i * 2, true);
      return out;
    }
    case 'U16': {
      const out = new Int32Array(n);
      for (let i = 0; i < n; i++) out[i] = dv.getUint16(i * 2, true);
      return out;
    }
    case 'I8': {
      const out = new Int32Array(n);
      for (let i = 0; i < n; i++) out[i] = dv.getInt8(i);
      return out;
    }
    case 'U8':
    case 'BOOL':
      return Int32Array.from(aligned.subarray(0, n));
    case 'U32': {
      const out = new Int32Array(n);
      for (let i = 0; i < n; i++) {
        const v = dv.getUint32(i * 4, true);
        if (v > 0x7fffffff) throw new InputError(`tensor '${name}': U32 value ${v} does not fit in int32`, { file });
        out[i] = v;
      }
      return out;
    }
    case 'I64':
    case 'U64': {
      const out = new Int32Array(n);
      for (let i = 0; i < n; i++) {
        const v = dtype === 'I64' ? dv.getBigInt64(i * 8, true) : dv.getBigUint64(i * 8, true);
        if (v > 2147483647n || v < -2147483648n) {
          throw new InputError(`tensor '${name}': ${dtype} value ${v} does not fit in int32`, { file });
        }
        out[i] = Number(v);
      }
      return out;
    }
  }
}

/** A raw tensor converted as `decodeTensorBytes` does. */
export function decodeRawTensor(raw: RawTensor, file: string): TensorEntry {
  return { name: raw.name, dtype: raw.dtype, shape: raw.shape, data: decodeTensorBytes(raw.bytes, raw.dtype, raw.shape, file, raw.name) };
}

/**
 * Reads exactly `length` bytes at `position` of an open file into a fresh (8-byte aligned) array,
 * in chunks below the 2 GiB limit of one read. A short file is an InputError naming `what`.
 */
export function readExactly(fd: number, position: number, length: number, file: string, what: string): Uint8Array {
  const out = new Uint8Array(length);
  let done = 0;
  while (done < length) {
    const n = readSync(fd, out, done, Math.min(READ_CHUNK, length - done), position + done);
    if (n === 0) throw new InputError(`truncated file: ${what} needs bytes ${position}..${position + length} but the file ends at byte ${position + done}`, { file });
    done += n;
  }
  return out;
}

interface ParsedHeader {
  /** Offsets relative to the start of the data section. */
  tensors: Map<string, { dtype: SafetensorsDtype; shape: number[]; begin: number; end: number }>;
  metadata: Record<string, string>;
}

/** Checks the header JSON against a data section of `dataLen` bytes. */
function parseHeaderJson(json: Uint8Array, dataLen: number, file: string): ParsedHeader {
  let header: Record<string, unknown>;
  try {
    header = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(json));
  } catch (e) {
    throw new InputError(`corrupt safetensors: header is not valid JSON (${(e as Error).message})`, { file });
  }
  if (header === null || typeof header !== 'object' || Array.isArray(header)) {
    throw new InputError('corrupt safetensors: header is not a JSON object', { file });
  }
  const tensors: ParsedHeader['tensors'] = new Map();
  let metadata: Record<string, string> = {};
  for (const [name, raw] of Object.entries(header)) {
    if (name === '__metadata__') {
      if (raw !== null && (typeof raw !== 'object' || Array.isArray(raw))) throw new InputError('corrupt safetensors: __metadata__ is not an object', { file });
      metadata = (raw ?? {}) as Record<string, string>;
      continue;
    }
    const info = raw as { dtype?: unknown; shape?: unknown; data_offsets?: unknown } | null;
    const dtype = info?.dtype;
    if (!isSafetensorsDtype(dtype)) {
      throw new InputError(`tensor '${name}': unsupported dtype ${JSON.stringify(info?.dtype)}`, { file });
    }
    const shape = info!.shape;
    if (!Array.isArray(shape) || !shape.every((d) => Number.isSafeInteger(d) && d >= 0)) {
      throw new InputError(`tensor '${name}': shape ${JSON.stringify(shape)} is not a list of non-negative integers`, { file });
    }
    const off = info!.data_offsets;
    if (!Array.isArray(off) || off.length !== 2 || !off.every((d) => Number.isSafeInteger(d) && d >= 0) || off[1] < off[0]) {
      throw new InputError(`tensor '${name}': data_offsets ${JSON.stringify(off)} is not [begin, end]`, { file });
    }
    const want = elementCount(shape as number[]) * DTYPE_BYTES[dtype];
    if (off[1] - off[0] !== want) {
      throw new InputError(`tensor '${name}': ${dtype}${JSON.stringify(shape)} needs ${want} bytes but data_offsets span ${off[1] - off[0]}`, { file });
    }
    if (off[1] > dataLen) {
      throw new InputError(`truncated safetensors: tensor '${name}' ends at byte ${off[1]} of the data section, which has ${dataLen} bytes`, { file });
    }
    tensors.set(name, { dtype, shape: shape as number[], begin: off[0], end: off[1] });
  }
  // Two tensors sharing bytes mean a corrupt header (the format stores each tensor once).
  const spans = [...tensors].filter(([, t]) => t.end > t.begin).sort((a, b) => a[1].begin - b[1].begin);
  for (let i = 1; i < spans.length; i++) {
    const [prevName, prev] = spans[i - 1];
    const [name, t] = spans[i];
    if (t.begin < prev.end) {
      throw new InputError(`corrupt safetensors: tensor '${name}' (bytes ${t.begin}..${t.end}) overlaps tensor '${prevName}' (bytes ${prev.begin}..${prev.end})`, { file });
    }
  }
  return { tensors, metadata };
}

function headerLength(lengthField: Uint8Array, available: number, file: string): number {
  const len = new DataView(lengthField.buffer, lengthField.byteOffset, 8).getBigUint64(0, true);
  if (len > BigInt(available) || len > BigInt(MAX_HEADER_BYTES)) {
    throw new InputError(`corrupt or truncated safetensors: header length ${len} but the file has ${available} bytes after the length field`, { file });
  }
  return Number(len);
}

/**
 * A safetensors file opened for reading tensor by tensor. Holds a file descriptor until `close()`.
 */
export class SafetensorsReader {
  readonly tensors: ReadonlyMap<string, SafetensorsTensorInfo>;

  private constructor(
    readonly file: string,
    private fd: number | undefined,
    readonly fileSize: number,
    tensors: Map<string, SafetensorsTensorInfo>,
    readonly metadata: Record<string, string>,
  ) {
    this.tensors = tensors;
  }

  /** Opens `path` and reads and checks its header (no tensor data). */
  static open(path: string): SafetensorsReader {
    let fd: number;
    try {
      fd = openSync(path, 'r');
    } catch (e) {
      throw new InputError(`cannot read safetensors file (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`, { file: path });
    }
    try {
      const size = fstatSync(fd).size;
      if (size < 8) throw new InputError(`not a safetensors file: ${size} bytes, shorter than the 8-byte header length`, { file: path });
      const n = headerLength(readExactly(fd, 0, 8, path, 'the header length'), size - 8, path);
      const parsed = parseHeaderJson(readExactly(fd, 8, n, path, 'the header'), size - 8 - n, path);
      const dataStart = 8 + n;
      const infos = new Map<string, SafetensorsTensorInfo>();
      for (const [name, t] of parsed.tensors) {
        infos.set(name, { name, dtype: t.dtype, shape: t.shape, byteOffset: dataStart + t.begin, byteLength: t.end - t.begin });
      }
      return new SafetensorsReader(path, fd, size, infos, parsed.metadata);
    } catch (e) {
      closeSync(fd);
      throw e;
    }
  }

  names(): string[] {
    return [...this.tensors.keys()];
  }

  info(name: string): SafetensorsTensorInfo {
    const t = this.tensors.get(name);
    if (!t) throw new InputError(`no tensor '${name}' in this safetensors file`, { file: this.file });
    return t;
  }

  /** The tensor's stored bytes and dtype, unconverted. */
  readRaw(name: string): RawTensor {
    const t = this.info(name);
    if (this.fd === undefined) throw new Error(`${this.file}: safetensors reader used after close()`);
    const bytes = readExactly(this.fd, t.byteOffset, t.byteLength, this.file, `tensor '${name}'`);
    return { name, dtype: t.dtype, shape: [...t.shape], bytes };
  }

  /** The tensor converted to Float32Array / Int32Array. */
  read(name: string): TensorEntry {
    return decodeRawTensor(this.readRaw(name), this.file);
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}

/** Opens a safetensors file for reading tensor by tensor (see SafetensorsReader; call close()). */
export function openSafetensors(path: string): SafetensorsReader {
  return SafetensorsReader.open(path);
}

/** Parses a safetensors buffer. `file` is used in error messages only. */
export function parseSafetensors(buf: Uint8Array, file = '<buffer>'): SafetensorsFile {
  if (buf.byteLength < 8) throw new InputError(`not a safetensors file: ${buf.byteLength} bytes, shorter than the 8-byte header length`, { file });
  const n = headerLength(buf.subarray(0, 8), buf.byteLength - 8, file);
  const dataStart = 8 + n;
  const parsed = parseHeaderJson(buf.subarray(8, dataStart), buf.byteLength - dataStart, file);
  const tensors = new Map<string, TensorEntry>();
  for (const [name, t] of parsed.tensors) {
    const data = decodeTensorBytes(buf.subarray(dataStart + t.begin, dataStart + t.end), t.dtype, t.shape, file, name);
    tensors.set(name, { name, dtype: t.dtype, shape: t.shape, data });
  }
  return { tensors, metadata: parsed.metadata };
}

/** Every tensor of a safetensors file, read one at a time (no buffer of the whole file). */
export function readSafetensors(path: string): SafetensorsFile {
  const r = openSafetensors(path);
  try {
    const tensors = new Map<string, TensorEntry>();
    for (const name of r.names()) tensors.set(name, r.read(name));
    return { tensors, metadata: r.metadata };
  } finally {
    r.close();
  }
}

export interface TensorToWrite {
  dtype?: 'F32' | 'I32' | 'I64';
  shape: number[];
  data: ArrayLike<number>;
}

/** Serialises tensors (sorted by name, like the reference implementation) into safetensors bytes. */
export function serializeSafetensors(tensors: Record<string, TensorToWrite>, metadata?: Record<string, string>): Uint8Array {
  const names = Object.keys(tensors).sort();
  const header: Record<string, unknown> = {};
  if (metadata) header.__metadata__ = metadata;
  let offset = 0;
  const blobs: Uint8Array[] = [];
  for (const name of names) {
    const t = tensors[name];
    const dtype = t.dtype ?? 'F32';
    const count = t.shape.reduce((a, b) => a * b, 1);
    if (t.data.length !== count) throw new Error(`tensor '${name}': shape ${JSON.stringify(t.shape)} holds ${count} values, data has ${t.data.length}`);
    let bytes: Uint8Array;
    if (dtype === 'F32') bytes = new Uint8Array(Float32Array.from(t.data).buffer);
    else if (dtype === 'I32') bytes = new Uint8Array(Int32Array.from(t.data).buffer);
    else bytes = new Uint8Array(BigInt64Array.from(Array.from(t.data, (v) => BigInt(v))).buffer);
    header[name] = { dtype, shape: t.shape, data_offsets: [offset, offset + bytes.byteLength] };
    offset += bytes.byteLength;
    blobs.push(bytes);
  }
  let json = JSON.stringify(header);
  // Pad the header with spaces to a multiple of 8 so the data section is 8-byte aligned.
  json += ' '.repeat((8 - (Buffer.byteLength(json) % 8)) % 8);
  const hdr = Buffer.from(json, 'utf8');
  const out = new Uint8Array(8 + hdr.byteLength + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(hdr.byteLength), true);
  out.set(hdr, 8);
  let p = 8 + hdr.byteLength;
  for (const b of blobs) {
    out.set(b, p);
    p += b.byteLength;
  }
  return out;
}

/** Writes a safetensors file atomically (temp file, then rename). */
export function writeSafetensors(path: string, tensors: Record<string, TensorToWrite>, metadata?: Record<string, string>): void {
  writeFileAtomicSync(path, serializeSafetensors(tensors, metadata));
}
