/**
 * lib/models/ran/tf-checkpoint.ts (TensorFlow tensor bundles) and variable-mapping.ts (RanNet's
 * checkpoint names), on bundles ./helpers/tf-bundle-writer.ts writes per the format's
 * specification: several shards, every dtype RAN's checkpoints hold (float32 weights, an int64
 * global_step) and entries the reader must skip or refuse (string, variant), multi-block indexes
 * with restart points and shared key prefixes, snappy-compressed blocks; each corruption gives one
 * line naming the tensor or block and the file. The golden RAN set's weights, written as a bundle
 * under their checkpoint names (folder, stored zip, deflated zip in a subfolder), read back
 * bit-identical. Two bundles TensorFlow itself wrote (1.12 and 2.14, from tensorflow/serving's test
 * data, Apache-2.0: fixtures/tf-bundles/README.md) read with the values their generator assigns, and
 * the writer reproduces the 1.12 index byte for byte, so the writer follows the format TensorFlow
 * writes, not only our reading of it.
 */
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';

import { crc32c, maskCrc32c, unmaskCrc32c } from '../lib/util/crc32c.js';
import { InputError } from '../lib/util/errors.js';
import { openSafetensors } from '../lib/models/safetensors.js';
import { decodeBundleEntry } from '../lib/models/ran/bundle-protos.js';
import { snappyDecompress } from '../lib/models/ran/snappy.js';
import { readTableEntries } from '../lib/models/ran/sstable.js';
import { readTfCheckpoint, type TfTensorData } from '../lib/models/ran/tf-checkpoint.js';
import {
  RAN_CELL_TRANSFORM_VARIABLES,
  ranEncoderVariableNames,
  ranVariableMapping,
  ranVariableName,
  readRanCheckpointTensors,
} from '../lib/models/ran/variable-mapping.js';
import { buildTable, bytesOf, DT, entryProto, headerProto, snappyCompress, writeTfBundle, zipBytes, type BundleTensor } from './helpers/tf-bundle-writer.js';

import { SHARED_DIR } from './helpers/env.js';

/** The RAN golden set's model folder (ANGLE_SHARED_DIR or ../shared); its tests skip, saying so, without it. */
const GOLDEN = SHARED_DIR ? join(SHARED_DIR, 'golden', 'ran-tiny-seed11', 'model') : '';
const NO_GOLDEN = GOLDEN && existsSync(join(GOLDEN, 'model.safetensors')) ? false : 'no RAN golden set (<shared>/golden/ran-tiny-seed11): set ANGLE_SHARED_DIR';

/** A tensor's elements as a plain array (numbers, or bigints for 64-bit integers). */
function values(d: TfTensorData): Array<number | bigint> {
  return Array.from(d as Iterable<number | bigint>);
}

function tempDir(t: TestContext): string {
  const d = mkdtempSync(join(tmpdir(), 'tf-ckpt-'));
  t.after(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

/** A deterministic float32 tensor of `shape` (values i * 0.25 - 3 + seed). */
function f32(name: string, shape: number[], seed = 0): BundleTensor & { values: Float32Array } {
  const n = shape.reduce((a, b) => a * b, 1);
  const values = Float32Array.from({ length: n }, (_, i) => i * 0.25 - 3 + seed);
  return { name, dtype: DT.float, shape, bytes: bytesOf(values), values };
}

/** Many variables with long shared prefixes, so the index has several blocks and restart points. */
function manyTensors(): Array<BundleTensor & { values?: Float32Array }> {
  const out: Array<BundleTensor & { values?: Float32Array }> = [];
  for (let i = 0; i < 3; i++) {
    for (const v of ['dense-q/kernel', 'dense-q/bias', 'dense-k/kernel', 'dense-k/bias', 'layernorm/gamma', 'layernorm/beta']) {
      out.push(f32(`rannet/ran-${i}/encode-attn/${v}`, v.endsWith('kernel') ? [3, 5] : [5], i));
    }
  }
  out.push(f32('rannet/token-embedding/embeddings', [7, 3]));
  out.push(f32('scalar', []));
  out.push(f32('empty', [0, 4]));
  out.push({ name: 'global_step', dtype: DT.int64, shape: [], bytes: bytesOf(BigInt64Array.of(123456789012n)) });
  out.push({ name: 'counts', dtype: DT.int32, shape: [3], bytes: bytesOf(Int32Array.of(-1, 0, 2 ** 31 - 1)) });
  out.push({ name: 'double', dtype: DT.double, shape: [2], bytes: bytesOf(Float64Array.of(Math.PI, -1e300)) });
  out.push({ name: 'flags', dtype: DT.bool, shape: [2], bytes: Uint8Array.of(1, 0) });
  out.push({ name: 'half', dtype: DT.half, shape: [1], bytes: bytesOf(Uint16Array.of(0x3c00)) });
  out.push({ name: '_CHECKPOINTABLE_OBJECT_GRAPH', dtype: DT.string, shape: [], strings: ['\n\x08graph'] });
  out.push({ name: 'names', dtype: DT.string, shape: [2], strings: ['a', 'bcd'] });
  out.push({ name: 'iterator', dtype: DT.variant, shape: [] });
  return out;
}

test('crc32c: the standard check value, chaining, masking', () => {
  assert.equal(crc32c(new TextEncoder().encode('123456789')), 0xe3069283);
  assert.equal(crc32c(new Uint8Array(32)), 0x8a9136aa); // RFC 3720 B.4: 32 zero bytes
  assert.equal(crc32c(new Uint8Array(32).fill(0xff)), 0x62a8ab43);
  const a = Uint8Array.from({ length: 1003 }, (_, i) => (i * 31) & 255);
  assert.equal(crc32c(a.subarray(501), crc32c(a.subarray(0, 501))), crc32c(a));
  // Against the bitwise definition at every alignment and length around the word loop's edges.
  const bitwise = (d: Uint8Array, crc: number) => {
    let c = ~crc >>> 0;
    for (const x of d) {
      c ^= x;
      for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
    }
    return ~c >>> 0;
  };
  for (let o = 0; o < 8; o++) for (let n = 0; n < 40; n++) assert.equal(crc32c(a.subarray(o, o + n), 7), bitwise(a.subarray(o, o + n), 7), `offset ${o} length ${n}`);
  assert.equal(unmaskCrc32c(maskCrc32c(0xdeadbeef)), 0xdeadbeef);
  assert.notEqual(maskCrc32c(0xdeadbeef), 0xdeadbeef);
});

test('snappy: literals, overlapping and long copies round-trip; damage is refused', () => {
  const text = new TextEncoder().encode('rannet/ran-0/encode-attn/dense-q/kernel '.repeat(40) + 'abababababababab' + 'x'.repeat(300));
  const packed = snappyCompress(text);
  assert.ok(packed.length < text.length / 3, `compressed ${packed.length} of ${text.length}`);
  assert.deepEqual(snappyDecompress(packed), text);
  // Hand-made: literal "ab", then a 1-byte-offset copy of length 6 at offset 2 (overlapping) -> "abababab".
  assert.deepEqual(new TextDecoder().decode(snappyDecompress(Uint8Array.of(8, 0x04, 0x61, 0x62, 0x01 | (2 << 2), 2))), 'abababab');
  assert.throws(() => snappyDecompress(Uint8Array.of(8, 0x04, 0x61, 0x62, 0x01 | (2 << 2), 9)), /reaches 9 bytes back/);
  assert.throws(() => snappyDecompress(Uint8Array.of(9, 0x04, 0x61, 0x62)), /decompresses to 2 bytes, the preamble says 9/);
});

test('LevelDB table: multi-block, restart points, shared prefixes, snappy blocks; keys come back in order', () => {
  const entries = Array.from({ length: 300 }, (_, i) => ({
    key: new TextEncoder().encode(`rannet/ran-${i % 7}/encode-attn/dense-${String(i).padStart(4, '0')}`),
    value: Uint8Array.from({ length: i % 13 }, (_, j) => (j + i) & 255),
  }));
  const expectKeys = entries.map((e) => new TextDecoder().decode(e.key)).sort();
  for (const compression of ['none', 'snappy'] as const) {
    const stats = { dataBlocks: 0, restarts: 0 };
    const table = buildTable(entries, { blockSize: 256, restartInterval: 4, compression, stats });
    assert.ok(stats.dataBlocks >= 10 && stats.restarts >= 2 * stats.dataBlocks, `${stats.dataBlocks} blocks, ${stats.restarts} restarts`);
    const back = readTableEntries(table, 't.index');
    assert.deepEqual(back.map((e) => new TextDecoder().decode(e.key)), expectKeys);
    for (const e of back) {
      const i = Number(new TextDecoder().decode(e.key).slice(-4));
      assert.deepEqual(Array.from(e.value), Array.from({ length: i % 13 }, (_, j) => (j + i) & 255));
    }
  }
  // Shared prefixes at work: the table is smaller than its keys and values laid end to end.
  const table = buildTable(entries, { blockSize: 256, restartInterval: 4 });
  assert.ok(table.length < entries.reduce((a, e) => a + e.key.length + e.value.length, 0));
});

test('round trip: several shards, every dtype, multi-block index, folder / prefix / .index paths', (t) => {
  const dir = tempDir(t);
  const tensors = manyTensors();
  for (const compression of ['none', 'snappy'] as const) {
    const prefix = join(dir, compression, 'model.ckpt');
    const stats = { dataBlocks: 0, restarts: 0 };
    writeTfBundle(prefix, tensors, { numShards: 3, blockSize: 200, restartInterval: 3, compression, alignment: compression === 'none' ? 1 : 8, stats });
    assert.ok(stats.dataBlocks >= 3 && stats.restarts > stats.dataBlocks, `${stats.dataBlocks} index blocks, ${stats.restarts} restarts`);
    for (const path of [join(dir, compression), prefix, `${prefix}.index`]) {
      const ckpt = readTfCheckpoint(path);
      try {
        assert.equal(ckpt.header.numShards, 3);
        assert.deepEqual(ckpt.names(), tensors.map((x) => x.name).sort());
        for (const x of tensors.filter((x) => x.values)) {
          const got = ckpt.tensor(x.name);
          assert.equal(got.dtype, 'float32');
          assert.deepEqual(got.shape, x.shape);
          assert.deepEqual(got.data, x.values, x.name);
        }
        assert.equal(ckpt.tensor('global_step').dtype, 'int64');
        assert.deepEqual(values(ckpt.tensor('global_step').data), [123456789012n]);
        assert.deepEqual(values(ckpt.tensor('counts').data), [-1, 0, 2 ** 31 - 1]);
        assert.deepEqual(values(ckpt.tensor('double').data), [Math.PI, -1e300]);
        assert.deepEqual(values(ckpt.tensor('flags').data), [1, 0]);
        assert.equal(ckpt.tensor('half').dtype, 'float16');
        assert.deepEqual(values(ckpt.tensor('half').data), [0x3c00]);
        assert.deepEqual(ckpt.tensor('scalar').shape, []);
        assert.equal(ckpt.tensor('empty').data.length, 0);
        // String and variant entries are listed, skipped by tensors(), refused by name by tensor().
        assert.equal(ckpt.info('names').dtype, 'string');
        assert.equal(ckpt.info('iterator').numeric, false);
        assert.throws(() => ckpt.tensor('names'), (e: Error) => e instanceof InputError && /tensor 'names' has dtype string, which this reader does not return/.test(e.message) && e.message.includes('model.ckpt.index'));
        assert.throws(() => ckpt.tensor('iterator'), /dtype variant/);
        assert.deepEqual([...ckpt.tensors()].map((x) => x.name), tensors.filter((x) => x.bytes).map((x) => x.name).sort());
        assert.throws(() => ckpt.tensor('nope'), /no tensor 'nope' in the checkpoint/);
        // Tensors really are spread over the shards.
        assert.deepEqual(new Set(tensors.map((x) => ckpt.info(x.name).shardId)), new Set([0, 1, 2]));
      } finally {
        ckpt.close();
      }
    }
  }
});

/** Writes the standard bundle into `dir/model.ckpt` and returns its prefix. */
function standardBundle(dir: string, numShards = 2): string {
  const prefix = join(dir, 'model.ckpt');
  writeTfBundle(prefix, manyTensors(), { numShards, blockSize: 200, restartInterval: 3 });
  return prefix;
}

/** Asserts that `fn` throws an InputError whose message is one line matching `re` and naming `file`. */
function throwsOneLine(fn: () => unknown, re: RegExp, file: string): void {
  assert.throws(fn, (e: Error) => {
    assert.ok(e instanceof InputError, `not an InputError: ${e}`);
    assert.ok(!e.message.includes('\n'), `more than one line: ${e.message}`);
    assert.match(e.message, re);
    assert.ok(e.message.includes(file), `'${e.message}' does not name ${file}`);
    return true;
  });
}

test('corrupt tensor data: one line naming the tensor and its shard file', (t) => {
  const dir = tempDir(t);
  const prefix = standardBundle(dir);
  const ckpt0 = readTfCheckpoint(prefix);
  const info = ckpt0.info('rannet/ran-1/encode-attn/dense-k/kernel');
  ckpt0.close();
  const shard = `${prefix}.data-0000${info.shardId}-of-00002`;
  const bytes = readFileSync(shard);
  bytes[info.offset + 5] ^= 0x40;
  writeFileSync(shard, bytes);
  const ckpt = readTfCheckpoint(prefix);
  try {
    throwsOneLine(() => ckpt.tensor('rannet/ran-1/encode-attn/dense-k/kernel'), /tensor 'rannet\/ran-1\/encode-attn\/dense-k\/kernel' \(60 bytes at offset \d+\) fails its checksum: the index says CRC-32C 0x[0-9a-f]{8}, the bytes give 0x[0-9a-f]{8}/, shard);
    // Other tensors still read.
    assert.equal(ckpt.tensor('rannet/ran-1/encode-attn/dense-k/bias').data.length, 5);
  } finally {
    ckpt.close();
  }
});

test('corrupt index block, wrong magic, truncated index: one line naming the index file', (t) => {
  const dir = tempDir(t);
  const prefix = standardBundle(dir);
  const index = `${prefix}.index`;
  const good = readFileSync(index);
  // A byte inside the first data block (a key or an entry proto) flipped.
  const flipped = Buffer.from(good);
  flipped[10] ^= 0x01;
  writeFileSync(index, flipped);
  throwsOneLine(() => readTfCheckpoint(prefix), /data block 0 \(bytes 0\.\.\d+\) fails its checksum/, index);
  // The magic number.
  const badMagic = Buffer.from(good);
  badMagic[badMagic.length - 1] ^= 0xff;
  writeFileSync(index, badMagic);
  throwsOneLine(() => readTfCheckpoint(prefix), /wrong magic number 0x[0-9a-f]{16} at the end of the file, expected 0xdb4775248b80fb57/, index);
  // Cut short: the footer is gone.
  writeFileSync(index, good.subarray(0, good.length - 30));
  throwsOneLine(() => readTfCheckpoint(prefix), /wrong magic number|fewer than the 48-byte footer/, index);
  writeFileSync(index, good.subarray(0, 20));
  throwsOneLine(() => readTfCheckpoint(prefix), /20 bytes, fewer than the 48-byte footer/, index);
  // An unknown compression type in a trailer (checksum recomputed so that only the type is wrong).
  const typed = Buffer.from(good);
  const table = readTableEntries(good, index); // sanity: the good file reads
  assert.ok(table.length > 10);
  const footerAt = typed.length - 48;
  // The index block's handle is the footer's second varint pair; find its trailer and set type 2.
  let p = footerAt;
  const rv = () => {
    let v = 0;
    for (let s = 0; ; s += 7) {
      const b = typed[p++];
      v += (b & 0x7f) * 2 ** s;
      if (!(b & 0x80)) return v;
    }
  };
  rv();
  rv();
  const off = rv();
  const size = rv();
  typed[off + size] = 2;
  typed.writeUInt32LE(maskCrc32c(crc32c(typed.subarray(off, off + size + 1))), off + size + 1);
  writeFileSync(index, typed);
  throwsOneLine(() => readTfCheckpoint(prefix), /the index block has compression type 2; only 0 \(none\) and 1 \(snappy\)/, index);
});

test('missing shard, truncated shard, entry past the shard: one line naming the file and a tensor', (t) => {
  const dir = tempDir(t);
  const prefix = standardBundle(dir, 3);
  const shard1 = `${prefix}.data-00001-of-00003`;
  const saved = readFileSync(shard1);
  unlinkSync(shard1);
  throwsOneLine(() => readTfCheckpoint(prefix), /missing data shard 2 of 3 \(it holds tensor '[^']+'\): the index names 3 shard\(s\)/, shard1);
  writeFileSync(shard1, saved.subarray(0, saved.length - 3));
  throwsOneLine(() => readTfCheckpoint(prefix), /tensor '[^']+': needs bytes \d+\.\.\d+ of its shard, which has \d+ bytes \(truncated\?\)/, shard1);
  writeFileSync(shard1, saved);
  readTfCheckpoint(prefix).close();
  // Not a checkpoint at all.
  throwsOneLine(() => readTfCheckpoint(join(dir, 'other.ckpt')), /no TensorFlow checkpoint here: neither the path nor 'other\.ckpt\.index' exists/, 'other.ckpt');
  const empty = join(dir, 'empty');
  mkdirSync(empty);
  throwsOneLine(() => readTfCheckpoint(empty), /no TensorFlow checkpoint here: no '\*\.index' file/, empty);
});

test('entries that disagree with their bytes or the header: one line naming the tensor', (t) => {
  const dir = tempDir(t);
  const one = (x: BundleTensor, opts = {}) => {
    const sub = mkdtempSync(join(dir, 'b-'));
    writeTfBundle(join(sub, 'model.ckpt'), [x], opts);
    return join(sub, 'model.ckpt');
  };
  // The entry says float32 [3, 5] but holds 56 bytes.
  const short = one({ name: 'w', dtype: DT.float, shape: [3, 5], bytes: new Uint8Array(56) });
  throwsOneLine(() => readTfCheckpoint(short), /tensor 'w': the index gives 56 bytes for float32 \[3, 5\], which takes 60/, `${short}.index`);
  const neg = one({ name: 'w', dtype: DT.float, shape: [-1, 5], bytes: new Uint8Array(0) });
  throwsOneLine(() => readTfCheckpoint(neg), /tensor 'w': shape \[-1, 5\] is not a fully defined shape/, `${neg}.index`);
  const big = one(f32('w', [2]), { header: { endianness: 1 } });
  throwsOneLine(() => readTfCheckpoint(big), /the bundle is big-endian/, `${big}.index`);
  const future = one(f32('w', [2]), { header: { minConsumer: 2 } });
  throwsOneLine(() => readTfCheckpoint(future), /needs a reader of version >= 2/, `${future}.index`);
});

test('checkpoint folder choice: the checkpoint state file picks among several; a single subfolder is looked into', (t) => {
  const dir = tempDir(t);
  writeTfBundle(join(dir, 'run', 'model.ckpt-100'), [f32('w', [2], 1)]);
  writeTfBundle(join(dir, 'run', 'model.ckpt-200'), [f32('w', [2], 2)]);
  throwsOneLine(() => readTfCheckpoint(join(dir, 'run')), /2 checkpoints here \(model\.ckpt-100, model\.ckpt-200\) and no 'checkpoint' state file naming one/, join(dir, 'run'));
  writeFileSync(join(dir, 'run', 'checkpoint'), 'model_checkpoint_path: "model.ckpt-200"\nall_model_checkpoint_paths: "model.ckpt-100"\n');
  for (const path of [join(dir, 'run'), dir]) {
    const c = readTfCheckpoint(path);
    assert.deepEqual(values(c.tensor('w').data), [-1, -0.75]);
    c.close();
  }
});

const FIXTURES = join(import.meta.dirname, 'fixtures', 'tf-bundles');

test('bundles TensorFlow wrote (1.12 Saver, 2.14 object-based with a snappy data block) read with their values; our writer reproduces the 1.12 index byte for byte', () => {
  // Values from saved_model_half_plus_two.py (tensorflow/serving), see fixtures/tf-bundles/README.md.
  const tf1 = readTfCheckpoint(join(FIXTURES, 'half_plus_two_mkl_tf1.12'));
  try {
    assert.deepEqual(tf1.names(), ['a', 'b', 'c', 'conv2d/bias', 'conv2d/kernel', 'conv2d_1/bias', 'conv2d_1/kernel', 'conv2d_2/bias', 'conv2d_2/kernel']);
    assert.deepEqual([0.5, 2, 3], ['a', 'b', 'c'].map((n) => tf1.tensor(n).data[0]));
    assert.deepEqual(tf1.tensor('a').shape, []);
    for (const l of ['conv2d', 'conv2d_1', 'conv2d_2']) {
      assert.deepEqual(values(tf1.tensor(`${l}/bias`).data), [0]); // Keras zeros initializer
      const k = tf1.tensor(`${l}/kernel`);
      assert.deepEqual(k.shape, [1, 1, 1, 1]);
      const v = Number(k.data[0]);
      assert.ok(v !== 0 && Math.abs(v) <= Math.sqrt(3), `${l}/kernel ${v}: Glorot-uniform with fan_in = fan_out = 1`);
    }
    assert.equal(tf1.header.producer, 1);
  } finally {
    tf1.close();
  }
  const index12 = join(FIXTURES, 'half_plus_two_mkl_tf1.12', 'variables.index');
  const tfBytes = readFileSync(index12);
  const tfEntries = readTableEntries(tfBytes, index12);
  assert.deepEqual(Buffer.from(buildTable(tfEntries)), tfBytes);
  // ... and its header and entry protos, field for field.
  assert.deepEqual(headerProto(1), new Uint8Array(tfEntries[0].value));
  for (const { value } of tfEntries.slice(1)) {
    const e = decodeBundleEntry(value);
    assert.deepEqual(entryProto({ dtype: e.dtypeCode, shape: e.shape, shard: e.shardId, offset: e.offset, size: e.size, crc: unmaskCrc32c(e.maskedCrc32c) }), new Uint8Array(value));
  }

  const stats = { dataBlocks: 0, snappyBlocks: 0 };
  const index214 = join(FIXTURES, 'half_plus_two_tf2.14', 'variables.index');
  readTableEntries(readFileSync(index214), index214, stats);
  assert.deepEqual(stats, { dataBlocks: 1, snappyBlocks: 1 }, 'TF 2.14 stores its data block snappy-compressed (the small index block stays raw)');
  const tf2 = readTfCheckpoint(join(FIXTURES, 'half_plus_two_tf2.14', 'variables'));
  try {
    assert.deepEqual(tf2.names(), ['_CHECKPOINTABLE_OBJECT_GRAPH', 'a/.ATTRIBUTES/VARIABLE_VALUE', 'b/.ATTRIBUTES/VARIABLE_VALUE', 'c/.ATTRIBUTES/VARIABLE_VALUE']);
    assert.deepEqual([...tf2.tensors()].map((t) => [t.name, t.dtype, t.data[0]]), [
      ['a/.ATTRIBUTES/VARIABLE_VALUE', 'float32', 0.5],
      ['b/.ATTRIBUTES/VARIABLE_VALUE', 'float32', 2],
      ['c/.ATTRIBUTES/VARIABLE_VALUE', 'float32', 3],
    ]);
    assert.deepEqual(tf2.info('_CHECKPOINTABLE_OBJECT_GRAPH'), { name: '_CHECKPOINTABLE_OBJECT_GRAPH', dtype: 'string', numeric: false, shape: [], shardId: 0, offset: 12, size: 619 });
  } finally {
    tf2.close();
  }
});

test('a TensorFlow-written bundle with one data byte changed fails its CRC on that tensor', (t) => {
  const dir = tempDir(t);
  for (const f of ['variables.index', 'variables.data-00000-of-00001']) copyFileSync(join(FIXTURES, 'half_plus_two_mkl_tf1.12', f), join(dir, f));
  const data = join(dir, 'variables.data-00000-of-00001');
  const bytes = readFileSync(data);
  bytes[4 + 3] ^= 0x01; // the sign bit's byte of 'b' (offset 4)
  writeFileSync(data, bytes);
  const c = readTfCheckpoint(dir);
  try {
    assert.equal(c.tensor('a').data[0], 0.5);
    throwsOneLine(() => c.tensor('b'), /tensor 'b' \(4 bytes at offset 4\) fails its checksum/, data);
  } finally {
    c.close();
  }
});

test('variable mapping: RanNet.variable_mapping names and get_var_name', { skip: NO_GOLDEN }, () => {
  const m = ranVariableMapping(2);
  assert.deepEqual([...m.keys()], ['Token-Embedding', 'Embedding-LayerNorm', 'RAN-0', 'RAN-1', 'MLM-Hidden', 'MLM-Matching']);
  assert.equal(m.get('RAN-0')!.length, 39);
  assert.equal(m.get('RAN-1')![0], 'rannet/ran-1/cell-glu/dense-t/bias');
  assert.equal(ranEncoderVariableNames(12).length, 3 + 12 * 39);
  // The golden set stores exactly the encoder's names (plus the cell-transform head).
  const golden = openSafetensors(join(GOLDEN, 'model.safetensors'));
  try {
    const head = RAN_CELL_TRANSFORM_VARIABLES.map((v) => `rannet/${v}`);
    assert.deepEqual(golden.names().filter((n) => !head.includes(n)).sort(), ranEncoderVariableNames(2).sort());
  } finally {
    golden.close();
  }
  // Keras weight names as TF < 2.5 and >= 2.5 give them.
  assert.equal(ranVariableName('RAN-0', 'RAN-0/window-loop/encode-attn/dense-q/kernel:0'), 'rannet/ran-0/encode-attn/dense-q/kernel');
  assert.equal(ranVariableName('RAN-0', 'cell-initializer-group/cell-initializer/kernel:0'), 'rannet/ran-0/cell-initializer/kernel');
  assert.equal(ranVariableName('Token-Embedding', 'Token-Embedding/embeddings:0'), 'rannet/token-embedding/embeddings');
  assert.equal(ranVariableName('Embedding-LayerNorm', 'gamma:0'), 'rannet/embedding-layernorm/gamma');
  assert.throws(() => ranVariableMapping(0), /positive integer/);
});

/** The golden set's weights as bundle tensors, in the order of its file. */
function goldenTensors(): BundleTensor[] {
  const g = openSafetensors(join(GOLDEN, 'model.safetensors'));
  try {
    return g.names().map((name) => {
      const raw = g.readRaw(name);
      assert.equal(raw.dtype, 'F32');
      return { name, dtype: DT.float, shape: raw.shape, bytes: raw.bytes.slice() };
    });
  } finally {
    g.close();
  }
}

test('the golden RAN weights as a released-layout checkpoint (folder, stored zip, deflated zip in a subfolder) read back identical', { skip: NO_GOLDEN }, (t) => {
  const dir = tempDir(t);
  const tensors = goldenTensors();
  // A training checkpoint's extras that export_checkpoint drops; a reader of the release skips them.
  const extras: BundleTensor[] = [
    { name: 'global_step', dtype: DT.int64, shape: [], bytes: bytesOf(BigInt64Array.of(1000n)) },
    { name: '_CHECKPOINTABLE_OBJECT_GRAPH', dtype: DT.string, shape: [], strings: ['graph'] },
  ];
  const folder = join(dir, 'RAN_tiny');
  writeTfBundle(join(folder, 'model.ckpt'), [...tensors, ...extras], { numShards: 2 });
  copyFileSync(join(GOLDEN, 'config.json'), join(folder, 'config.json'));
  copyFileSync(join(GOLDEN, 'vocab.txt'), join(folder, 'vocab.txt'));
  const files = ['config.json', 'vocab.txt', 'model.ckpt.index', 'model.ckpt.data-00000-of-00002', 'model.ckpt.data-00001-of-00002'];
  const stored = join(dir, 'stored.zip');
  writeFileSync(stored, zipBytes(files.map((f) => ({ name: f, data: readFileSync(join(folder, f)) }))));
  const deflated = join(dir, 'RAN_tiny.zip');
  writeFileSync(
    deflated,
    zipBytes([
      { name: 'RAN_tiny/', data: new Uint8Array(0) },
      { name: '__MACOSX/RAN_tiny/._model.ckpt.index', data: Uint8Array.of(0, 5, 22, 7) },
      ...files.map((f) => ({ name: `RAN_tiny/${f}`, data: readFileSync(join(folder, f)), deflate: true })),
    ]),
  );
  const byName = new Map(tensors.map((x) => [x.name, x]));
  const shapes = new Map(tensors.map((x) => [x.name, x.shape]));
  for (const path of [folder, join(folder, 'model.ckpt'), stored, deflated]) {
    const ckpt = readTfCheckpoint(path);
    try {
      const weights = readRanCheckpointTensors(ckpt, 2, { shapes, cellTransform: true });
      assert.equal(weights.size, tensors.length, path);
      for (const [name, w] of weights) {
        assert.deepEqual(w.shape, byName.get(name)!.shape);
        assert.deepEqual(new Uint8Array(w.data.buffer, w.data.byteOffset, w.data.byteLength), byName.get(name)!.bytes, `${path}: ${name}`);
      }
      // Without the head: the encoder only, as from a real release.
      assert.equal(readRanCheckpointTensors(ckpt, 2).size, ranEncoderVariableNames(2).length);
      assert.deepEqual(JSON.parse(new TextDecoder().decode(ckpt.siblingFile('config.json'))).ran_layers, 2);
      assert.equal(ckpt.siblingFile('vocab.txt')!.byteLength, readFileSync(join(GOLDEN, 'vocab.txt')).byteLength);
      assert.equal(ckpt.siblingFile('absent.json'), undefined);
    } finally {
      ckpt.close();
    }
  }
  // Damage inside the zip is named by archive and entry.
  const zipBytesDamaged = readFileSync(stored);
  const c = readTfCheckpoint(stored);
  const info = c.info('rannet/ran-1/output-attn/dense-v/kernel');
  c.close();
  const shardEntry = `model.ckpt.data-0000${info.shardId}-of-00002`;
  const at = zipBytesDamaged.indexOf(Buffer.from(shardEntry)) + shardEntry.length + info.offset + 17;
  zipBytesDamaged[at] ^= 0x10;
  writeFileSync(stored, zipBytesDamaged);
  const d = readTfCheckpoint(stored);
  try {
    throwsOneLine(() => readRanCheckpointTensors(d, 2), /tensor 'rannet\/ran-1\/output-attn\/dense-v\/kernel' \(4096 bytes at offset \d+\) fails its checksum/, `${stored}!${shardEntry}`);
  } finally {
    d.close();
  }
});

test('a checkpoint that does not fit the RanNet mapping: one line naming the variable', { skip: NO_GOLDEN }, (t) => {
  const dir = tempDir(t);
  const tensors = goldenTensors();
  const shapes = new Map(tensors.map((x) => [x.name, x.shape]));
  // One variable missing.
  const missing = join(dir, 'missing', 'model.ckpt');
  writeTfBundle(missing, tensors.filter((x) => x.name !== 'rannet/ran-1/concat-layernorm/gamma'));
  let c = readTfCheckpoint(missing);
  throwsOneLine(() => readRanCheckpointTensors(c, 2), /checkpoint variable 'rannet\/ran-1\/concat-layernorm\/gamma' is missing; the checkpoint has 88 variables/, `${missing}.index`);
  // Three layers asked of a two-layer checkpoint.
  throwsOneLine(() => readRanCheckpointTensors(c, 3), /checkpoint variable 'rannet\/ran-1\/concat-layernorm\/gamma' is missing \(and 39 more of the 120 RanNet\.variable_mapping names for 3 layers\)/, `${missing}.index`);
  c.close();
  // A shape the config does not expect (checked from the index, before reading data).
  const wrongShape = join(dir, 'shape', 'model.ckpt');
  writeTfBundle(wrongShape, tensors.map((x) => (x.name === 'rannet/ran-0/encode-attn/dense-q/kernel' ? { ...x, shape: [16, 32] } : x)));
  c = readTfCheckpoint(wrongShape);
  throwsOneLine(() => readRanCheckpointTensors(c, 2, { shapes }), /checkpoint variable 'rannet\/ran-0\/encode-attn\/dense-q\/kernel' has shape \[16, 32\], the config expects \[32, 16\]/, `${wrongShape}.index`);
  c.close();
  // Another dtype.
  const wrongType = join(dir, 'dtype', 'model.ckpt');
  writeTfBundle(wrongType, tensors.map((x) => (x.name === 'rannet/embedding-layernorm/beta' ? { ...x, dtype: DT.int32 } : x)));
  c = readTfCheckpoint(wrongType);
  throwsOneLine(() => readRanCheckpointTensors(c, 2), /checkpoint variable 'rannet\/embedding-layernorm\/beta' is int32, expected float32/, `${wrongType}.index`);
  c.close();
});
