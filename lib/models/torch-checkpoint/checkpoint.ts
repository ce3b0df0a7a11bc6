/**
 * PyTorch checkpoints (`pytorch_model.bin`, `*.pt`, `*.pth`) read without Python and without
 * running any of their code, one tensor at a time.
 *
 * Two formats, both written by `torch.save` (torch/serialization.py):
 * - zip (PyTorch 1.6 and later): `<root>/data.pkl` is the pickled object, whose tensors refer to
 *   storages by key; each storage's bytes are the stored (uncompressed) entry `<root>/data/<key>`,
 *   little-endian (`<root>/byteorder` says so in newer files). `<root>` is the file name without
 *   its extension (`pytorch_model/`) or `archive/`. ZIP64 archives (over 4 GiB) work (./zip-archive.ts).
 * - legacy (before 1.6, or `_use_new_zipfile_serialization=False`): five pickles in a row — the
 *   magic number 0x1950a86a20f9469cfc6c, the protocol version 1001, a sys-info dict, the object,
 *   the list of storage keys — then, for each key in that order, an int64 element count and the
 *   storage's bytes.
 * The even older tar format (PyTorch < 0.4) and TorchScript archives (`torch.jit.save`) are refused
 * by name.
 *
 * The pickle is read by ./unpickler.ts under the policy of ./torch-globals.ts, which allows only
 * tensor reconstruction. The object must be a dict (a state dict) of tensors; values that are not
 * tensors are listed in `skipped`. A tensor may be any strided view of its storage (a transpose, a
 * slice with a storage offset, an expand with stride 0, two names sharing one storage); `readRaw`
 * returns it contiguous in row-major order. Views that reach past their storage, storages missing
 * from the archive or of the wrong size are InputErrors naming the file and the tensor, found when
 * the file is opened.
 */
import { closeSync, fstatSync, openSync } from 'node:fs';
import { InputError } from '../../util/errors.js';
import { decodeRawTensor, DTYPE_BYTES, elementCount, readExactly, type RawTensor, type SafetensorsDtype, type TensorEntry } from '../safetensors.js';
import { isTorchTensorRef, storageBytes, torchPolicy, type TorchTensorRef } from './torch-globals.js';
import { BufferInput, describePyValue, type PickleInput, unpickle } from './unpickler.js';
import { looksLikeZip, ZipArchive } from './zip-archive.js';

/** torch/serialization.py MAGIC_NUMBER and PROTOCOL_VERSION of the legacy format. */
const LEGACY_MAGIC = 0x1950a86a20f9469cfc6cn;
const LEGACY_PROTOCOL = 1001;

export type TorchCheckpointFormat = 'zip' | 'legacy';

/** A tensor of the checkpoint: its dtype and shape, and where its elements are. */
export interface TorchTensorInfo {
  name: string;
  dtype: SafetensorsDtype;
  shape: number[];
  stride: number[];
  /** In elements. */
  storageOffset: number;
  storageKey: string;
  /** Absolute position of the storage's first byte in the file. */
  storageByteOffset: number;
  /** Whether the elements are stored contiguously in row-major order (read in one piece). */
  contiguous: boolean;
}

/** Row-major strides of a shape. */
function rowMajorStrides(shape: readonly number[]): number[] {
  const s = new Array<number>(shape.length);
  let acc = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    s[i] = acc;
    acc *= shape[i];
  }
  return s;
}

function isContiguous(shape: readonly number[], stride: readonly number[]): boolean {
  const want = rowMajorStrides(shape);
  // A dimension of size 1 may carry any stride.
  return shape.every((d, i) => d <= 1 || stride[i] === want[i]);
}

/** Highest element index (relative to the storage) a view touches; -1 for an empty view. */
function lastElement(t: TorchTensorRef): number {
  if (t.shape.some((d) => d === 0)) return -1;
  return t.shape.reduce((acc, d, i) => acc + (d - 1) * t.stride[i], t.storageOffset);
}

/** Buffered reads of an open file from a position, for the legacy format's consecutive pickles. */
class FileInput implements PickleInput {
  private buf: Uint8Array = new Uint8Array(0);
  private bufStart = 0;
  private at: number;
  constructor(
    private readonly fd: number,
    private readonly size: number,
    private readonly file: string,
    start: number,
  ) {
    this.at = start;
  }
  get position(): number {
    return this.at;
  }
  get remaining(): number {
    return this.size - this.at;
  }
  private fill(n: number): void {
    if (this.at >= this.bufStart && this.at + n <= this.bufStart + this.buf.byteLength) return;
    const len = Math.min(Math.max(n, 1 << 20), this.size - this.at);
    this.buf = readExactly(this.fd, this.at, len, this.file, 'the pickle');
    this.bufStart = this.at;
  }
  readByte(): number {
    if (this.at >= this.size) throw new RangeError('end of input');
    this.fill(1);
    return this.buf[this.at++ - this.bufStart];
  }
  read(n: number): Uint8Array {
    if (n > this.remaining) throw new RangeError('end of input');
    this.fill(n);
    const out = this.buf.subarray(this.at - this.bufStart, this.at - this.bufStart + n);
    this.at += n;
    return out;
  }
}

/** A PyTorch checkpoint opened for reading tensor by tensor. Holds a file descriptor until `close()`. */
export class TorchCheckpoint {
  readonly tensors: ReadonlyMap<string, TorchTensorInfo>;

  private constructor(
    readonly file: string,
    private fd: number | undefined,
    readonly format: TorchCheckpointFormat,
    tensors: Map<string, TorchTensorInfo>,
    /** Top-level keys whose values are not tensors (numbers, strings, nested dicts...). */
    readonly skipped: readonly string[],
  ) {
    this.tensors = tensors;
  }

  static open(path: string): TorchCheckpoint {
    let fd: number;
    try {
      fd = openSync(path, 'r');
    } catch (e) {
      throw new InputError(`cannot read PyTorch checkpoint (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`, { file: path });
    }
    try {
      const size = fstatSync(fd).size;
      const head = readExactly(fd, 0, Math.min(size, 512), path, 'the first bytes');
      let parsed: { format: TorchCheckpointFormat; root: unknown; storageStarts: Map<string, number> };
      if (looksLikeZip(head)) parsed = readZip(fd, path, size);
      else if (head.byteLength >= 262 && new TextDecoder('latin1').decode(head.subarray(257, 262)) === 'ustar') {
        throw new InputError('a tar archive: the checkpoint format of PyTorch before 0.4 is not supported; load it with torch.load and save it again with torch.save', { file: path });
      } else if (head[0] === 0x80) parsed = readLegacy(fd, path, size);
      else {
        const hex = [...head.subarray(0, 4)].map((b) => b.toString(16).padStart(2, '0')).join(' ');
        throw new InputError(`not a PyTorch checkpoint: expected a zip archive (torch.save since 1.6) or a pickle (older torch.save), found bytes ${hex}`, { file: path });
      }
      const { tensors, skipped } = tensorsOf(parsed.root, parsed.storageStarts, path);
      return new TorchCheckpoint(path, fd, parsed.format, tensors, skipped);
    } catch (e) {
      closeSync(fd);
      throw e;
    }
  }

  names(): string[] {
    return [...this.tensors.keys()];
  }

  info(name: string): TorchTensorInfo {
    const t = this.tensors.get(name);
    if (!t) throw new InputError(`no tensor '${name}' in this PyTorch checkpoint`, { file: this.file });
    return t;
  }

  /** The tensor's elements as stored (its dtype, little-endian), contiguous in row-major order. */
  readRaw(name: string): RawTensor {
    const t = this.info(name);
    if (this.fd === undefined) throw new Error(`${this.file}: PyTorch checkpoint used after close()`);
    const item = DTYPE_BYTES[t.dtype];
    const n = elementCount(t.shape);
    if (n === 0) return { name, dtype: t.dtype, shape: [...t.shape], bytes: new Uint8Array(0) };
    const what = `tensor '${name}'`;
    if (t.contiguous) {
      const bytes = readExactly(this.fd, t.storageByteOffset + t.storageOffset * item, n * item, this.file, what);
      return { name, dtype: t.dtype, shape: [...t.shape], bytes };
    }
    // A strided view: read the span of the storage it touches, then gather its elements in order.
    const first = t.storageOffset;
    const last = t.shape.reduce((acc, d, i) => acc + (d - 1) * t.stride[i], first);
    const span = readExactly(this.fd, t.storageByteOffset + first * item, (last - first + 1) * item, this.file, what);
    const out = new Uint8Array(n * item);
    const idx = new Array<number>(t.shape.length).fill(0);
    let src = 0; // element index relative to `first`
    for (let k = 0; k < n; k++) {
      out.set(span.subarray(src * item, src * item + item), k * item);
      // Odometer over the multi-index, last dimension fastest.
      for (let d = t.shape.length - 1; d >= 0; d--) {
        idx[d]++;
        src += t.stride[d];
        if (idx[d] < t.shape[d]) break;
        src -= t.stride[d] * idx[d];
        idx[d] = 0;
      }
    }
    return { name, dtype: t.dtype, shape: [...t.shape], bytes: out };
  }

  /** The tensor converted to Float32Array / Int32Array (as ../safetensors.ts decodes). */
  read(name: string): TensorEntry {
    return decodeRawTensor(this.readRaw(name), this.file);
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}

/** Opens a PyTorch checkpoint for reading tensor by tensor (see TorchCheckpoint; call close()). */
export function openTorchCheckpoint(path: string): TorchCheckpoint {
  return TorchCheckpoint.open(path);
}

/** Whether the first bytes of a file are a PyTorch checkpoint's (zip or legacy pickle). */
export function looksLikeTorchCheckpoint(head: Uint8Array): boolean {
  return looksLikeZip(head) || (head.byteLength >= 2 && head[0] === 0x80 && head[1] >= 2 && head[1] <= 5);
}

function readZip(fd: number, file: string, size: number): { format: 'zip'; root: unknown; storageStarts: Map<string, number> } {
  const zip = ZipArchive.read(fd, file, size);
  const pickles = [...zip.entries.keys()].filter((n) => /^[^/]+\/data\.pkl$/.test(n));
  if (pickles.length !== 1) {
    throw new InputError(`zip archive without exactly one <root>/data.pkl (found ${pickles.length}): not a torch.save checkpoint`, { file });
  }
  const prefix = pickles[0].slice(0, -'data.pkl'.length);
  if (zip.entries.has(`${prefix}constants.pkl`) || [...zip.entries.keys()].some((n) => n.startsWith(`${prefix}code/`))) {
    throw new InputError('a TorchScript archive (torch.jit.save), not a torch.save checkpoint: load it with torch.jit.load and save its state_dict()', { file });
  }
  const order = zip.entries.get(`${prefix}byteorder`);
  if (order) {
    const v = new TextDecoder().decode(zip.readEntry(order)).trim();
    if (v !== 'little') throw new InputError(`checkpoint written on a ${v}-endian machine (${prefix}byteorder); only little-endian files are read`, { file });
  }
  const what = pickles[0];
  const policy = torchPolicy(file, what, false);
  const root = unpickle(new BufferInput(zip.readEntry(zip.entries.get(pickles[0])!)), policy, file, what);
  const storageStarts = new Map<string, number>();
  for (const s of policy.storages.values()) {
    const name = `${prefix}data/${s.key}`;
    const e = zip.entries.get(name);
    if (!e) throw new InputError(`storage '${s.key}' (${s.storageType}[${s.numel}]) is missing: the archive has no entry ${name}`, { file });
    if (e.method !== 0) throw new InputError(`storage entry ${name} is compressed (method ${e.method}); torch.save stores storages uncompressed`, { file });
    if (e.size < storageBytes(s)) {
      throw new InputError(`storage entry ${name} has ${e.size} bytes but ${s.storageType}[${s.numel}] needs ${storageBytes(s)} (truncated or corrupt)`, { file });
    }
    storageStarts.set(s.key, zip.dataOffset(e));
  }
  return { format: 'zip', root, storageStarts };
}

function readLegacy(fd: number, file: string, size: number): { format: 'legacy'; root: unknown; storageStarts: Map<string, number> } {
  const what = 'legacy torch.save format';
  const input = new FileInput(fd, size, file, 0);
  // The three leading pickles hold plain data; they need no global at all.
  const plain = torchPolicy(file, what, true);
  const magic = unpickle(input, plain, file, `${what} magic number`);
  if (magic !== LEGACY_MAGIC) {
    throw new InputError(`${what}: a pickle, but its first value ${describePyValue(magic)} is not torch.save's magic number (not a PyTorch checkpoint)`, { file });
  }
  const protocol = unpickle(input, plain, file, `${what} protocol version`);
  if (protocol !== LEGACY_PROTOCOL) throw new InputError(`${what}: protocol version ${describePyValue(protocol)}, expected ${LEGACY_PROTOCOL}`, { file });
  const sysInfo = unpickle(input, plain, file, `${what} system info`);
  if (sysInfo instanceof Map && sysInfo.get('little_endian') === false) {
    throw new InputError(`${what}: written on a big-endian machine; only little-endian files are read`, { file });
  }
  const policy = torchPolicy(file, what, true);
  const root = unpickle(input, policy, file, what);
  const keys = unpickle(input, plain, file, `${what} storage keys`);
  if (!Array.isArray(keys) || !keys.every((k) => typeof k === 'string')) {
    throw new InputError(`${what}: the storage key list is ${describePyValue(keys)}, not a list of strings`, { file });
  }
  // Then each storage in that order: an int64 element count, then the elements.
  const storageStarts = new Map<string, number>();
  let at = input.position;
  for (const key of keys as string[]) {
    const s = policy.storages.get(key);
    if (!s) throw new InputError(`${what}: storage key '${key}' is listed but no tensor uses it`, { file });
    const count = new DataView(readExactly(fd, at, 8, file, `the size of storage '${key}'`).buffer).getBigInt64(0, true);
    if (count !== BigInt(s.numel)) throw new InputError(`${what}: storage '${key}' holds ${count} elements but the pickle says ${s.numel}`, { file });
    storageStarts.set(key, at + 8);
    at += 8 + storageBytes(s);
    if (at > size) throw new InputError(`truncated: storage '${key}' ends at byte ${at} but the file has ${size}`, { file });
  }
  for (const s of policy.storages.values()) {
    if (!storageStarts.has(s.key)) throw new InputError(`${what}: storage '${s.key}' is used but not in the storage key list`, { file });
  }
  return { format: 'legacy', root, storageStarts };
}

/** The tensors of the unpickled object (a dict of name → tensor), checked against their storages. */
function tensorsOf(root: unknown, storageStarts: Map<string, number>, file: string): { tensors: Map<string, TorchTensorInfo>; skipped: string[] } {
  if (!(root instanceof Map)) {
    throw new InputError(`the checkpoint holds ${isTorchTensorRef(root) ? 'a single tensor' : describePyValue(root)}, not a state dict {name: tensor}`, { file });
  }
  const tensors = new Map<string, TorchTensorInfo>();
  const skipped: string[] = [];
  for (const [k, v] of root) {
    const name = typeof k === 'string' ? k : String(k);
    if (!isTorchTensorRef(v)) {
      skipped.push(name);
      continue;
    }
    const storageLength = storageBytes(v.storage);
    const item = DTYPE_BYTES[v.dtype];
    if (v.stride.some((s) => s < 0)) throw new InputError(`tensor '${name}': negative stride ${JSON.stringify(v.stride)}`, { file });
    const last = lastElement(v);
    if (last >= 0 && (last + 1) * item > storageLength) {
      throw new InputError(
        `tensor '${name}': its view (offset ${v.storageOffset}, shape ${JSON.stringify(v.shape)}, stride ${JSON.stringify(v.stride)}) reaches element ${last} but storage '${v.storage.key}' (${v.storage.storageType}) has ${Math.floor(storageLength / item)} elements of ${v.dtype}`,
        { file },
      );
    }
    tensors.set(name, {
      name,
      dtype: v.dtype,
      shape: v.shape,
      stride: v.stride,
      storageOffset: v.storageOffset,
      storageKey: v.storage.key,
      storageByteOffset: storageStarts.get(v.storage.key)!,
      contiguous: isContiguous(v.shape, v.stride),
    });
  }
  if (tensors.size === 0) {
    throw new InputError(`the checkpoint's dict holds no tensors (keys: ${skipped.slice(0, 10).join(', ') || 'none'}): expected a state dict {name: tensor}`, { file });
  }
  return { tensors, skipped };
}
