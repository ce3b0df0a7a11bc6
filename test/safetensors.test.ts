import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, existsSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseSafetensors, readSafetensors, serializeSafetensors, writeSafetensors } from '../lib/models/safetensors.js';
import { InputError } from '../lib/util/errors.js';

function rawFile(header: object, data: Uint8Array): Uint8Array {
  const h = Buffer.from(JSON.stringify(header));
  const out = new Uint8Array(8 + h.length + data.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(h.length), true);
  out.set(h, 8);
  out.set(data, 8 + h.length);
  return out;
}

test('round trip: F32, I32 and I64 with metadata', () => {
  const bytes = serializeSafetensors(
    { w: { shape: [2, 3], data: [1, 2, 3, 4, 5, 6.5] }, ids: { dtype: 'I64', shape: [3], data: [0, -7, 2 ** 31 - 1] }, m: { dtype: 'I32', shape: [1], data: [9] } },
    { format: 'pt' },
  );
  const f = parseSafetensors(bytes);
  assert.deepEqual(Array.from(f.tensors.get('w')!.data), [1, 2, 3, 4, 5, 6.5]);
  assert.deepEqual(f.tensors.get('w')!.shape, [2, 3]);
  assert.deepEqual(Array.from(f.tensors.get('ids')!.data), [0, -7, 2 ** 31 - 1]);
  assert.ok(f.tensors.get('ids')!.data instanceof Int32Array);
  assert.equal(f.metadata.format, 'pt');
  // The data section is 8-byte aligned, as the reference writer does.
  const headerLen = Number(new DataView(bytes.buffer).getBigUint64(0, true));
  assert.equal((8 + headerLen) % 8, 0);
});

test('F16 and BF16 decode to float32', () => {
  // f16: 1.0 = 0x3c00, -2.0 = 0xc000, 65504 = 0x7bff, smallest subnormal 0x0001 = 2^-24
  const f16 = new Uint8Array(new Uint16Array([0x3c00, 0xc000, 0x7bff, 0x0001]).buffer);
  // bf16: 1.0 = 0x3f80, -0.5 = 0xbf00, 3.140625 = 0x4049
  const bf16 = new Uint8Array(new Uint16Array([0x3f80, 0xbf00, 0x4049]).buffer);
  const data = new Uint8Array([...f16, ...bf16]);
  const f = parseSafetensors(
    rawFile({ a: { dtype: 'F16', shape: [4], data_offsets: [0, 8] }, b: { dtype: 'BF16', shape: [3], data_offsets: [8, 14] } }, data),
  );
  assert.deepEqual(Array.from(f.tensors.get('a')!.data), [1, -2, 65504, 2 ** -24]);
  assert.deepEqual(Array.from(f.tensors.get('b')!.data), [1, -0.5, 3.140625]);
});

test('truncated file: error names the file and the tensor', () => {
  const bytes = serializeSafetensors({ w: { shape: [4], data: [1, 2, 3, 4] } });
  assert.throws(() => parseSafetensors(bytes.subarray(0, bytes.length - 4), 'cut.safetensors'), (e: Error) => {
    assert.ok(e instanceof InputError);
    assert.match(e.message, /^cut\.safetensors: truncated safetensors: tensor 'w' ends at byte 16/);
    return true;
  });
  assert.throws(() => parseSafetensors(new Uint8Array(5), 'tiny.safetensors'), /tiny\.safetensors: not a safetensors file: 5 bytes/);
});

test('corrupt headers are reported, not decoded', () => {
  const big = new Uint8Array(16);
  new DataView(big.buffer).setBigUint64(0, 1000n, true);
  assert.throws(() => parseSafetensors(big, 'x'), /x: corrupt or truncated safetensors: header length 1000/);
  assert.throws(() => parseSafetensors(rawFile({ a: 1 } as object, new Uint8Array()).fill(0x21, 8, 9), 'x'), /header is not valid JSON/);
  assert.throws(() => parseSafetensors(rawFile({ a: { dtype: 'Q8', shape: [1], data_offsets: [0, 1] } }, new Uint8Array(1)), 'x'), /tensor 'a': unsupported dtype "Q8"/);
  assert.throws(() => parseSafetensors(rawFile({ a: { dtype: 'F32', shape: [3], data_offsets: [0, 8] } }, new Uint8Array(8)), 'x'), /F32\[3\] needs 12 bytes but data_offsets span 8/);
  assert.throws(() => parseSafetensors(rawFile({ a: { dtype: 'F32', shape: [-1], data_offsets: [0, 4] } }, new Uint8Array(4)), 'x'), /shape \[-1\] is not a list of non-negative integers/);
  const i64 = new Uint8Array(new BigInt64Array([2n ** 40n]).buffer);
  assert.throws(() => parseSafetensors(rawFile({ a: { dtype: 'I64', shape: [1], data_offsets: [0, 8] } }, i64), 'x'), /does not fit in int32/);
});

test('writeSafetensors is atomic and readSafetensors reports missing files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'st-'));
  try {
    const p = join(dir, 'a.safetensors');
    writeSafetensors(p, { w: { shape: [1], data: [3] } });
    assert.deepEqual(Array.from(readSafetensors(p).tensors.get('w')!.data), [3]);
    assert.deepEqual(readdirSync(dir), ['a.safetensors']);
    assert.throws(() => readSafetensors(join(dir, 'nope.safetensors')), /nope\.safetensors: cannot read safetensors file \(ENOENT\)/);
    assert.throws(() => writeSafetensors(join(dir, 'b.safetensors'), { w: { shape: [2], data: [1] } }), /holds 2 values, data has 1/);
    assert.equal(existsSync(join(dir, 'b.safetensors')), false);
    assert.deepEqual(readdirSync(dir), ['a.safetensors']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
