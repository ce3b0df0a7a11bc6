/**
 * safetensors: an 8-byte little-endian header length N, N bytes of JSON
 * `{name: {dtype, shape, data_offsets: [begin, end]}, "__metadata__"?: {...}}`, then the raw
 * little-endian tensor bytes (offsets relative to the end of the header).
 *
 * Reading converts floating tensors (F64, F32, F16, BF16) to Float32Array and integer tensors
 * to Int32Array (I64/U64 values must fit in 32 bits; BERT position ids and masks do). Every
 * inconsistency in the header is an InputError naming the file and the tensor, so a truncated
 * download is reported as such instead of as garbage weights.
 */
import { readFileSync } from 'node:fs';
import { writeFileAtomicSync } from '../util/atomic-write.js';
import { InputError } from '../util/errors.js';

export type SafetensorsDtype = 'F64' | 'F32' | 'F16' | 'BF16' | 'I64' | 'I32' | 'I16' | 'I8' | 'U8' | 'U16' | 'U32' | 'U64' | 'BOOL';

const BYTES: Record<SafetensorsDtype, number> = {
  F64: 8, F32: 4, F16: 2, BF16: 2, I64: 8, I32: 4, I16: 2, I8: 1, U8: 1, U16: 2, U32: 4, U64: 8, BOOL: 1,
};

export interface TensorEntry {
  name: string;
  dtype: SafetensorsDtype;
  shape: number[];
  /** Float32Array for floating dtypes, Int32Array for integer and bool dtypes. */
  data: Float32Array | Int32Array;
}

export interface SafetensorsFile {
  tensors: Map<string, TensorEntry>;
  metadata: Record<string, string>;
}

/** Largest header we accept; real files have headers of kilobytes to a few megabytes. */
const MAX_HEADER_BYTES = 100 * 1024 * 1024;

function f16ToF32(h: number): number {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const m = h & 0x3ff;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 31) return m ? Number.NaN : s * Number.POSITIVE_INFINITY;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}

function decode(buf: Uint8Array, dtype: SafetensorsDtype, n: number, file: string, name: string): Float32Array | Int32Array {
  // Copy into an aligned buffer: offsets in the file need not be aligned for typed-array views.
  const bytes = new Uint8Array(buf);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  switch (dtype) {
    case 'F32':
      return new Float32Array(bytes.buffer, bytes.byteOffset, n);
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
      return new Int32Array(bytes.buffer, bytes.byteOffset, n);
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
      return Int32Array.from(bytes.subarray(0, n));
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

/** Parses a safetensors buffer. `file` is used in error messages only. */
export function parseSafetensors(buf: Uint8Array, file = '<buffer>'): SafetensorsFile {
  if (buf.byteLength < 8) throw new InputError(`not a safetensors file: ${buf.byteLength} bytes, shorter than the 8-byte header length`, { file });
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const headerLen = dv.getBigUint64(0, true);
  if (headerLen > BigInt(buf.byteLength - 8) || headerLen > BigInt(MAX_HEADER_BYTES)) {
    throw new InputError(
      `corrupt or truncated safetensors: header length ${headerLen} but the file has ${buf.byteLength - 8} bytes after the length field`,
      { file },
    );
  }
  const n = Number(headerLen);
  let header: Record<string, unknown>;
  try {
    header = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(buf.subarray(8, 8 + n)));
  } catch (e) {
    throw new InputError(`corrupt safetensors: header is not valid JSON (${(e as Error).message})`, { file });
  }
  if (header === null || typeof header !== 'object' || Array.isArray(header)) {
    throw new InputError('corrupt safetensors: header is not a JSON object', { file });
  }
  const dataStart = 8 + n;
  const dataLen = buf.byteLength - dataStart;
  const tensors = new Map<string, TensorEntry>();
  let metadata: Record<string, string> = {};
  for (const [name, raw] of Object.entries(header)) {
    if (name === '__metadata__') {
      metadata = (raw ?? {}) as Record<string, string>;
      continue;
    }
    const info = raw as { dtype?: unknown; shape?: unknown; data_offsets?: unknown };
    const dtype = info?.dtype as SafetensorsDtype;
    if (typeof dtype !== 'string' || !(dtype in BYTES)) {
      throw new InputError(`tensor '${name}': unsupported dtype ${JSON.stringify(info?.dtype)}`, { file });
    }
    const shape = info.shape;
    if (!Array.isArray(shape) || !shape.every((d) => Number.isInteger(d) && d >= 0)) {
      throw new InputError(`tensor '${name}': shape ${JSON.stringify(shape)} is not a list of non-negative integers`, { file });
    }
    const off = info.data_offsets;
    if (!Array.isArray(off) || off.length !== 2 || !off.every((d) => Number.isInteger(d) && d >= 0) || off[1] < off[0]) {
      throw new InputError(`tensor '${name}': data_offsets ${JSON.stringify(off)} is not [begin, end]`, { file });
    }
    const count = (shape as number[]).reduce((a, b) => a * b, 1);
    const want = count * BYTES[dtype];
    if (off[1] - off[0] !== want) {
      throw new InputError(`tensor '${name}': ${dtype}${JSON.stringify(shape)} needs ${want} bytes but data_offsets span ${off[1] - off[0]}`, { file });
    }
    if (off[1] > dataLen) {
      throw new InputError(`truncated safetensors: tensor '${name}' ends at byte ${off[1]} of the data section, which has ${dataLen} bytes`, { file });
    }
    const data = decode(buf.subarray(dataStart + off[0], dataStart + off[1]), dtype, count, file, name);
    tensors.set(name, { name, dtype, shape: shape as number[], data });
  }
  return { tensors, metadata };
}

export function readSafetensors(path: string): SafetensorsFile {
  let buf: Buffer;
  try {
    buf = readFileSync(path);
  } catch (e) {
    throw new InputError(`cannot read safetensors file (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`, { file: path });
  }
  return parseSafetensors(buf, path);
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
