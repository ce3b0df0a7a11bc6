/**
 * Writes checkpoints for tests in the three layouts the loaders read, tensor by tensor (each
 * tensor's bytes are made when it is written, so a checkpoint of hundreds of MB never sits in
 * memory): safetensors (one file, or shards with `model.safetensors.index.json`) and a PyTorch zip
 * (`torch.save`'s layout: `archive/data.pkl` a state dict of `_rebuild_tensor_v2` calls, one
 * storage per tensor under `archive/data/<key>`; the pickle is written opcode by opcode, as
 * test/torch-checkpoint.test.ts crafts its own).
 */
import { closeSync, openSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { writeZip } from './zip-writer.js';

export interface TensorSpec {
  name: string;
  dtype: 'F32' | 'F16' | 'BF16';
  shape: number[];
}

/** The stored bytes of one tensor (little-endian), made when it is written. */
export type TensorBytes = (t: TensorSpec) => Uint8Array;

const BYTES: Record<TensorSpec['dtype'], number> = { F32: 4, F16: 2, BF16: 2 };

function byteLength(t: TensorSpec): number {
  return t.shape.reduce((a, b) => a * b, 1) * BYTES[t.dtype];
}

/** One safetensors file holding `tensors` in the order given. */
export function writeSafetensorsStreamed(path: string, tensors: TensorSpec[], bytesOf: TensorBytes): void {
  const header: Record<string, unknown> = {};
  let offset = 0;
  for (const t of tensors) {
    const n = byteLength(t);
    header[t.name] = { dtype: t.dtype, shape: t.shape, data_offsets: [offset, offset + n] };
    offset += n;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - (Buffer.byteLength(json) % 8)) % 8);
  const fd = openSync(path, 'w');
  try {
    const len = Buffer.alloc(8);
    len.writeBigUInt64LE(BigInt(Buffer.byteLength(json)));
    writeSync(fd, len);
    writeSync(fd, Buffer.from(json, 'utf8'));
    for (const t of tensors) {
      const b = bytesOf(t);
      if (b.byteLength !== byteLength(t)) throw new Error(`${t.name}: ${b.byteLength} bytes, ${byteLength(t)} expected`);
      writeSync(fd, b);
    }
  } finally {
    closeSync(fd);
  }
}

/** `shards` safetensors files in `dir` with their index (tensors dealt out in order, about evenly). */
export function writeShardedSafetensors(dir: string, tensors: TensorSpec[], bytesOf: TensorBytes, shards: number): string[] {
  const files: string[] = [];
  const weightMap: Record<string, string> = {};
  const per = Math.ceil(tensors.length / shards);
  for (let s = 0; s < shards; s++) {
    const part = tensors.slice(s * per, (s + 1) * per);
    const name = `model-${String(s + 1).padStart(5, '0')}-of-${String(shards).padStart(5, '0')}.safetensors`;
    writeSafetensorsStreamed(join(dir, name), part, bytesOf);
    for (const t of part) weightMap[t.name] = name;
    files.push(join(dir, name));
  }
  writeFileSync(join(dir, 'model.safetensors.index.json'), JSON.stringify({ metadata: {}, weight_map: weightMap }, null, 1));
  return files;
}

// Pickle opcodes (protocol 2) used below.
const ascii = (s: string) => [...Buffer.from(s, 'utf8')];
const u32le = (n: number) => [n & 0xff, (n >> 8) & 0xff, (n >> 16) & 0xff, (n >>> 24) & 0xff];
const op = {
  proto: [0x80, 2],
  str: (s: string) => [0x58, ...u32le(Buffer.byteLength(s)), ...ascii(s)],
  int: (n: number) => [0x4a, ...u32le(n)],
  global: (m: string, n: string) => [0x63, ...ascii(`${m}\n${n}\n`)],
  mark: [0x28],
  tuple: [0x74],
  emptyTuple: [0x29],
  reduce: [0x52],
  setitem: [0x73],
  persid: [0x51],
  false: [0x89],
  stop: [0x2e],
};

const STORAGE: Record<TensorSpec['dtype'], string> = { F32: 'FloatStorage', F16: 'HalfStorage', BF16: 'BFloat16Storage' };

/** A PyTorch zip checkpoint (what `torch.save(model.state_dict())` writes) holding `tensors`, contiguous. */
export function writeTorchZip(path: string, tensors: TensorSpec[], bytesOf: TensorBytes): void {
  const pickle: number[] = [...op.proto, ...op.global('collections', 'OrderedDict'), ...op.emptyTuple, ...op.reduce];
  tensors.forEach((t, key) => {
    const numel = t.shape.reduce((a, b) => a * b, 1);
    const strides = t.shape.map((_, i) => t.shape.slice(i + 1).reduce((a, b) => a * b, 1));
    pickle.push(
      ...op.str(t.name), ...op.global('torch._utils', '_rebuild_tensor_v2'), ...op.mark,
      ...op.mark, ...op.str('storage'), ...op.global('torch', STORAGE[t.dtype]), ...op.str(String(key)), ...op.str('cpu'), ...op.int(numel), ...op.tuple, ...op.persid,
      ...op.int(0), ...op.mark, ...t.shape.flatMap(op.int), ...op.tuple, ...op.mark, ...strides.flatMap(op.int), ...op.tuple, ...op.false,
      ...op.global('collections', 'OrderedDict'), ...op.emptyTuple, ...op.reduce, ...op.tuple, ...op.reduce,
      ...op.setitem,
    );
  });
  pickle.push(...op.stop);
  writeZip(path, [{ name: 'archive/data.pkl', data: Uint8Array.from(pickle) }, ...tensors.map((t, key) => ({ name: `archive/data/${key}`, data: bytesOf(t) }))]);
}
