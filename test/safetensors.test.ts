import assert from 'node:assert/strict';
import { closeSync, existsSync, ftruncateSync, mkdtempSync, openSync, readdirSync, rmSync, statSync, truncateSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { openSafetensors, parseSafetensors, readSafetensors, serializeSafetensors, writeSafetensors } from '../lib/models/safetensors.js';
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

/** A safetensors header (8-byte length + JSON padded to 8 bytes) and where its data section starts. */
function headerBytes(header: object): { bytes: Buffer; dataStart: number } {
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - (Buffer.byteLength(json) % 8)) % 8);
  const h = Buffer.from(json);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(h.length));
  return { bytes: Buffer.concat([len, h]), dataStart: 8 + h.length };
}

/** Writes `header` at 0 and each blob at data offset `at`, leaving the rest of the file a hole (sparse). */
function writeSparse(path: string, header: object, blobs: { at: number; bytes: Uint8Array }[], dataLength: number): number {
  const { bytes, dataStart } = headerBytes(header);
  const fd = openSync(path, 'w');
  try {
    writeSync(fd, bytes, 0, bytes.length, 0);
    for (const b of blobs) writeSync(fd, b.bytes, 0, b.bytes.byteLength, dataStart + b.at);
    ftruncateSync(fd, dataStart + dataLength);
  } finally {
    closeSync(fd);
  }
  return dataStart;
}

const TWO_GIB = 2 ** 31;

test('a weights file larger than 2 GiB: tensors past the 2 GiB mark read per tensor, values checked (sparse file)', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'st-big-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  // As a LLaMA shard is laid out: a large BF16 matrix first (262,145 x 4096 = 2 GiB + 8 KiB), then
  // small tensors after it. The matrix is a hole in the file except its first and last rows.
  const rows = 262_145;
  const embedBytes = rows * 4096 * 2;
  const after = Float32Array.of(1.5, -2.25, 3, 1e-3, -7, 65504);
  const afterF16 = Uint16Array.of(0x3c00, 0xc000, 0x7bff, 0x0001); // 1, -2, 65504, 2^-24
  const header = {
    __metadata__: { format: 'pt' },
    'model.embed_tokens.weight': { dtype: 'BF16', shape: [rows, 4096], data_offsets: [0, embedBytes] },
    'model.norm.weight': { dtype: 'F32', shape: [2, 3], data_offsets: [embedBytes, embedBytes + 24] },
    'model.norm.bias': { dtype: 'F16', shape: [4], data_offsets: [embedBytes + 24, embedBytes + 32] },
  };
  const path = join(dir, 'model-00001-of-00002.safetensors');
  writeSparse(path, header, [
    { at: 0, bytes: new Uint8Array(Uint16Array.of(0x3f80, 0xbf00).buffer) }, // bf16 1, -0.5
    { at: embedBytes - 4, bytes: new Uint8Array(Uint16Array.of(0x4049, 0x4000).buffer) }, // bf16 3.140625, 2 (last two elements)
    { at: embedBytes, bytes: new Uint8Array(after.buffer) },
    { at: embedBytes + 24, bytes: new Uint8Array(afterF16.buffer) },
  ], embedBytes + 32);
  assert.ok(statSync(path).size > TWO_GIB + 8192, 'the file is over 2 GiB');

  const r = openSafetensors(path);
  t.after(() => r.close());
  assert.deepEqual(r.names().sort(), ['model.embed_tokens.weight', 'model.norm.bias', 'model.norm.weight']);
  assert.equal(r.metadata.format, 'pt');
  const norm = r.info('model.norm.weight');
  assert.ok(norm.byteOffset > TWO_GIB, `byte offset ${norm.byteOffset} is past 2 GiB`);
  assert.deepEqual(Array.from(r.read('model.norm.weight').data), Array.from(after));
  assert.deepEqual(r.read('model.norm.weight').shape, [2, 3]);
  assert.deepEqual(Array.from(r.read('model.norm.bias').data), [1, -2, 65504, 2 ** -24]);
  // The raw form keeps 16-bit tensors as they are stored.
  const raw = r.readRaw('model.norm.bias');
  assert.equal(raw.dtype, 'F16');
  assert.deepEqual(Array.from(new Uint16Array(raw.bytes.buffer, raw.bytes.byteOffset, 4)), Array.from(afterF16));
  const embed = r.info('model.embed_tokens.weight');
  assert.deepEqual([embed.dtype, embed.shape, embed.byteLength], ['BF16', [rows, 4096], embedBytes]);
});

test('readSafetensors (every tensor, one read each) on a file over 2 GiB whose second tensor starts past the 2 GiB mark', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'st-big-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const farAt = TWO_GIB + 64;
  const path = join(dir, 'far.safetensors');
  writeSparse(
    path,
    { a: { dtype: 'F32', shape: [2], data_offsets: [0, 8] }, b: { dtype: 'BF16', shape: [3], data_offsets: [farAt, farAt + 6] } },
    [
      { at: 0, bytes: new Uint8Array(Float32Array.of(0.5, -4).buffer) },
      { at: farAt, bytes: new Uint8Array(Uint16Array.of(0x3f80, 0xbf00, 0x4049).buffer) },
    ],
    farAt + 6,
  );
  const f = readSafetensors(path);
  assert.deepEqual(Array.from(f.tensors.get('a')!.data), [0.5, -4]);
  assert.deepEqual(Array.from(f.tensors.get('b')!.data), [1, -0.5, 3.140625]);
  // Cut the file short of the far tensor: the error names the file and the tensor.
  truncateSync(path, farAt);
  assert.throws(() => openSafetensors(path), (e: Error) => e instanceof InputError && e.message.startsWith(`${path}: truncated safetensors: tensor 'b' ends at byte ${farAt + 6}`));
});

test('lazy reader: raw dtype and bytes, conversion, one tensor at a time; closed readers refuse', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'st-lazy-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'm.safetensors');
  writeSafetensors(path, { w: { shape: [2, 2], data: [1, 2, 3, 4] }, ids: { dtype: 'I64', shape: [2], data: [5, -6] } });
  const r = openSafetensors(path);
  const raw = r.readRaw('w');
  assert.equal(raw.dtype, 'F32');
  assert.deepEqual(Array.from(new Float32Array(raw.bytes.buffer)), [1, 2, 3, 4]);
  assert.deepEqual(Array.from(r.read('ids').data), [5, -6]);
  assert.throws(() => r.read('nope'), /no tensor 'nope' in this safetensors file/);
  r.close();
  assert.throws(() => r.read('w'), /used after close/);
});

test('corrupt headers: offsets past the end, overlapping tensors and bad metadata name the file and tensor', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'st-bad-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const write = (name: string, header: object, dataLength: number) => {
    const p = join(dir, name);
    const { bytes } = headerBytes(header);
    writeFileSync(p, Buffer.concat([bytes, Buffer.alloc(dataLength)]));
    return p;
  };
  const past = write('past.safetensors', { w: { dtype: 'F32', shape: [4], data_offsets: [8, 24] } }, 16);
  assert.throws(() => openSafetensors(past), (e: Error) => e instanceof InputError && e.message === `${past}: truncated safetensors: tensor 'w' ends at byte 24 of the data section, which has 16 bytes`);
  const overlap = write('overlap.safetensors', { a: { dtype: 'F32', shape: [2], data_offsets: [0, 8] }, b: { dtype: 'F32', shape: [2], data_offsets: [4, 12] } }, 12);
  assert.throws(() => openSafetensors(overlap), /overlap\.safetensors: corrupt safetensors: tensor 'b' \(bytes 4\.\.12\) overlaps tensor 'a' \(bytes 0\.\.8\)/);
  const meta = write('meta.safetensors', { __metadata__: [1] }, 0);
  assert.throws(() => openSafetensors(meta), /meta\.safetensors: corrupt safetensors: __metadata__ is not an object/);
  const huge = write('huge.safetensors', { a: { dtype: 'F32', shape: [2 ** 53], data_offsets: [0, 8] } }, 8);
  assert.throws(() => openSafetensors(huge), /tensor 'a': shape \[9007199254740992\] is not a list of non-negative integers/);
});
