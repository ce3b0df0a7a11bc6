/**
 * lib/models/torch-checkpoint on files Debian's torch 1.13 wrote with torch.save
 * (test/fixtures/torch/make_fixtures.py made them once; CI has no torch and reads the committed
 * files): the zip format, the legacy format, ZIP64 records, every dtype, strided views, shared
 * storages, parameters. Pickles that ask for code are refused, by name, without running anything.
 * Crafted archives (test/helpers/zip-writer.ts) cover damaged input and a sparse ZIP64 file whose
 * storages lie past 4 GiB.
 */
import assert from 'node:assert/strict';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';

import { openTorchCheckpoint } from '../lib/models/torch-checkpoint/index.js';
import { ZipArchive } from '../lib/models/torch-checkpoint/zip-archive.js';
import { InputError } from '../lib/util/errors.js';
import { writeZip, type ZipEntryToWrite } from './helpers/zip-writer.js';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'torch');
const fixture = (f: string) => join(FIXTURES, f);

interface Expected {
  dtype: string;
  shape: number[];
  values: number[];
}
const EXPECTED: Record<string, Expected> = JSON.parse(readFileSync(fixture('expected.json'), 'utf8'));

function tempDir(t: TestContext, prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  t.after(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

/** Every tensor of `file` against expected.json: dtype, shape and each value (16-bit ones widened exactly). */
function checkAllTensors(file: string): void {
  const c = openTorchCheckpoint(file);
  try {
    assert.deepEqual(c.names().sort(), Object.keys(EXPECTED).sort());
    assert.deepEqual(c.skipped, ['step']);
    for (const [name, e] of Object.entries(EXPECTED)) {
      const t = c.read(name);
      assert.equal(t.dtype, e.dtype, name);
      assert.deepEqual(t.shape, e.shape, name);
      const want = e.dtype.startsWith('F') || e.dtype === 'BF16' ? Float32Array.from(e.values) : Int32Array.from(e.values);
      assert.deepEqual(t.data, want, name);
    }
  } finally {
    c.close();
  }
}

test('zip format (torch.save since 1.6): every dtype, views, shared storages and parameters read as torch.load gives them', () => {
  checkAllTensors(fixture('tensors.pt'));
  const c = openTorchCheckpoint(fixture('tensors.pt'));
  try {
    assert.equal(c.format, 'zip');
    // The views as the pickle describes them.
    const tr = c.info('transposed');
    assert.deepEqual([tr.shape, tr.stride, tr.contiguous], [[4, 3], [1, 4], false]);
    const sl = c.info('sliced');
    assert.deepEqual([sl.storageOffset, sl.shape, sl.stride, sl.contiguous], [7, [2, 3], [5, 1], false]);
    const row = c.info('row');
    assert.deepEqual([row.storageOffset, row.contiguous, row.storageKey], [10, true, sl.storageKey]);
    assert.deepEqual(c.info('expanded').stride, [0, 1]);
    assert.equal(c.info('tied_a').storageKey, c.info('tied_b').storageKey);
    // 16-bit tensors come back raw as stored: f16 1.0 = 0x3c00, bf16 1.0 = 0x3f80.
    const f16 = c.readRaw('f16');
    assert.equal(f16.dtype, 'F16');
    assert.deepEqual(Array.from(new Uint16Array(f16.bytes.buffer, 0, 5)), [0x3c00, 0xc000, 0x2e66, 0x7bff, 0x0001]);
    const bf16 = c.readRaw('bf16');
    assert.deepEqual([bf16.dtype, new Uint16Array(bf16.bytes.buffer, 0, 4)[0]], ['BF16', 0x3f80]);
    // A strided f16 view is gathered element by element, still 16-bit.
    const ft = c.readRaw('f16_transposed');
    assert.deepEqual([ft.dtype, ft.shape, ft.bytes.byteLength], ['F16', [3, 2], 12]);
    assert.deepEqual(Array.from(c.read('scalar').data), [42]);
    assert.deepEqual(c.read('empty').shape, [0, 3]);
  } finally {
    c.close();
  }
});

test('legacy format (_use_new_zipfile_serialization=False) and a ZIP64 copy made by CPython read the same tensors', () => {
  checkAllTensors(fixture('tensors-legacy.pt'));
  assert.equal(openTorchCheckpoint(fixture('tensors-legacy.pt')).format, 'legacy');
  checkAllTensors(fixture('tensors-zip64.pt'));
  checkAllTensors(fixture('tensors-deflated-pickle.pt'));
});

test('a ZIP64 checkpoint over 4 GiB whose storages lie past the 4 GiB mark (sparse file)', (t) => {
  const dir = tempDir(t, 'torch-zip64-');
  // The entries of tensors.pt; from data/3 on, everything is placed beyond 4.5 GiB.
  const fd = openSync(fixture('tensors.pt'), 'r');
  let entries: ZipEntryToWrite[];
  try {
    const zip = ZipArchive.read(fd, fixture('tensors.pt'), statSync(fixture('tensors.pt')).size);
    entries = [...zip.entries.values()].map((e) => ({ name: e.name, data: zip.readEntry(e) }));
  } finally {
    closeSync(fd);
  }
  const far = entries.findIndex((e) => e.name.endsWith('/data/3'));
  entries[far].at = 4.5 * 2 ** 30;
  const big = join(dir, 'big.pt');
  const size = writeZip(big, entries);
  assert.ok(size > 2 ** 32 + 2 ** 29, `file is ${size} bytes`);
  checkAllTensors(big);
  const c = openTorchCheckpoint(big);
  try {
    assert.ok(Math.max(...[...c.tensors.values()].map((x) => x.storageByteOffset)) > 2 ** 32);
  } finally {
    c.close();
  }
});

test('a pickle that calls os.system is refused by name and nothing runs', () => {
  const marker = 'unsafe-pickle-executed.txt'; // what the pickle's command would write in the working directory
  assert.equal(existsSync(marker), false);
  assert.throws(
    () => openTorchCheckpoint(fixture('malicious.pt')),
    (e: Error) => e instanceof InputError && e.message.includes(fixture('malicious.pt')) && /refused the Python global 'posix\.system'/.test(e.message) && /was not run/.test(e.message),
  );
  assert.equal(existsSync(marker), false, 'the command did not run');
});

test('a whole pickled nn.Module and a TorchScript archive are refused with what they are', () => {
  assert.throws(() => openTorchCheckpoint(fixture('whole-module.pt')), /refused the Python global 'torch\.nn\.modules\.linear\.Linear'/);
  assert.throws(() => openTorchCheckpoint(fixture('torchscript.pt')), /a TorchScript archive \(torch\.jit\.save\), not a torch\.save checkpoint/);
  assert.throws(() => openTorchCheckpoint(fixture('tensors-deflated-storages.pt')), /storage entry tensors\/data\/\d+ is compressed \(method 8\); torch\.save stores storages uncompressed/);
});

// A few pickle opcodes, to craft what torch.save would never write.
const ascii = (s: string) => [...Buffer.from(s, 'utf8')];
const u32le = (n: number) => [n & 0xff, (n >> 8) & 0xff, (n >> 16) & 0xff, (n >>> 24) & 0xff];
const op = {
  proto: [0x80, 2],
  str: (s: string) => [0x58, ...u32le(Buffer.byteLength(s)), ...ascii(s)],
  int: (n: number) => [0x4b, n],
  global: (m: string, n: string) => [0x63, ...ascii(`${m}\n${n}\n`)],
  mark: [0x28],
  tuple: [0x74],
  tuple1: [0x85],
  emptyTuple: [0x29],
  reduce: [0x52],
  setitem: [0x73],
  persid: [0x51],
  false: [0x89],
  stop: [0x2e],
  stackGlobal: [0x93],
};

/** OrderedDict({'w': _rebuild_tensor_v2(storage '0' of FloatStorage[numel], 0, (size,), (1,), False, OrderedDict())}). */
function oneTensorPickle(numel: number, size: number): number[] {
  return [
    ...op.proto, ...op.global('collections', 'OrderedDict'), ...op.emptyTuple, ...op.reduce,
    ...op.str('w'), ...op.global('torch._utils', '_rebuild_tensor_v2'), ...op.mark,
    ...op.mark, ...op.str('storage'), ...op.global('torch', 'FloatStorage'), ...op.str('0'), ...op.str('cpu'), ...op.int(numel), ...op.tuple, ...op.persid,
    ...op.int(0), ...op.int(size), ...op.tuple1, ...op.int(1), ...op.tuple1, ...op.false,
    ...op.global('collections', 'OrderedDict'), ...op.emptyTuple, ...op.reduce, ...op.tuple, ...op.reduce,
    ...op.setitem, ...op.stop,
  ];
}

function crafted(dir: string, name: string, pickle: number[], storages: Record<string, Uint8Array> = {}): string {
  const p = join(dir, name);
  writeZip(p, [{ name: 'archive/data.pkl', data: Uint8Array.from(pickle) }, ...Object.entries(storages).map(([k, data]) => ({ name: `archive/data/${k}`, data }))]);
  return p;
}

test('crafted pickles: other ways to reach code are refused, damaged tensors are named', (t) => {
  const dir = tempDir(t, 'torch-crafted-');
  const f32 = (...v: number[]) => new Uint8Array(Float32Array.from(v).buffer);
  // The well-formed one first, so the failures below are about what they change.
  const ok = openTorchCheckpoint(crafted(dir, 'ok.pt', oneTensorPickle(3, 3), { 0: f32(1, 2, 3) }));
  assert.deepEqual(Array.from(ok.read('w').data), [1, 2, 3]);
  ok.close();

  const evalPickle = [...op.proto, ...op.str('builtins'), ...op.str('eval'), ...op.stackGlobal, ...op.str('1+1'), ...op.tuple1, ...op.reduce, ...op.stop];
  assert.throws(() => openTorchCheckpoint(crafted(dir, 'eval.pt', evalPickle)), /refused the Python global 'builtins\.eval'/);
  const inst = [...op.proto, ...op.mark, ...op.str('id'), 0x69, ...ascii('os\nsystem\n'), ...op.stop];
  assert.throws(() => openTorchCheckpoint(crafted(dir, 'inst.pt', inst)), /archive\/data\.pkl: refused: the pickle instantiates os\.system directly/);
  const callStorage = [...op.proto, ...op.global('torch', 'FloatStorage'), ...op.emptyTuple, ...op.reduce, ...op.stop];
  assert.throws(() => openTorchCheckpoint(crafted(dir, 'call.pt', callStorage)), /REDUCE calls torch\.FloatStorage, which this reader never calls \(at byte \d+, REDUCE \(0x52\)\)/);
  const cut = oneTensorPickle(3, 3).slice(0, -1);
  assert.throws(() => openTorchCheckpoint(crafted(dir, 'cut.pt', cut, { 0: f32(1, 2, 3) })), /the pickle ends without STOP \(truncated\)/);

  assert.throws(
    () => openTorchCheckpoint(crafted(dir, 'view.pt', oneTensorPickle(2, 3), { 0: f32(1, 2) })),
    (e: Error) => e instanceof InputError && /tensor 'w': its view \(offset 0, shape \[3\], stride \[1\]\) reaches element 2 but storage '0' \(torch\.FloatStorage\) has 2 elements of F32/.test(e.message),
  );
  assert.throws(() => openTorchCheckpoint(crafted(dir, 'missing.pt', oneTensorPickle(3, 3))), /storage '0' \(torch\.FloatStorage\[3\]\) is missing: the archive has no entry archive\/data\/0/);
  assert.throws(() => openTorchCheckpoint(crafted(dir, 'short.pt', oneTensorPickle(3, 3), { 0: f32(1, 2) })), /storage entry archive\/data\/0 has 8 bytes but torch\.FloatStorage\[3\] needs 12/);
  const notDict = [...op.proto, ...op.int(7), ...op.stop];
  assert.throws(() => openTorchCheckpoint(crafted(dir, 'int.pt', notDict)), /the checkpoint holds number 7, not a state dict \{name: tensor\}/);
});

test('damaged files: cut short, not a checkpoint at all', (t) => {
  const dir = tempDir(t, 'torch-damaged-');
  const zipBytes = readFileSync(fixture('tensors.pt'));
  writeFileSync(join(dir, 'cut.pt'), zipBytes.subarray(0, zipBytes.length - 30));
  assert.throws(() => openTorchCheckpoint(join(dir, 'cut.pt')), /cut\.pt: corrupt zip archive: no end-of-central-directory record/);
  const legacy = readFileSync(fixture('tensors-legacy.pt'));
  writeFileSync(join(dir, 'cut-legacy.pt'), legacy.subarray(0, legacy.length - 1));
  // Cut into the last storage (its data, or its size field when it is empty).
  assert.throws(() => openTorchCheckpoint(join(dir, 'cut-legacy.pt')), /cut-legacy\.pt: truncated( file)?: (the size of )?storage '\d+' (ends at byte|needs bytes)/);
  writeFileSync(join(dir, 'text.bin'), 'hello, not weights');
  assert.throws(() => openTorchCheckpoint(join(dir, 'text.bin')), /text\.bin: not a PyTorch checkpoint: expected a zip archive \(torch\.save since 1\.6\) or a pickle \(older torch\.save\), found bytes 68 65 6c 6c/);
  assert.throws(() => openTorchCheckpoint(join(dir, 'absent.bin')), /absent\.bin: cannot read PyTorch checkpoint \(ENOENT\)/);
});
