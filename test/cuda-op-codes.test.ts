/**
 * The op, dtype and precision codes that TypeScript sends to the native addon must be the numbers
 * the CUDA sources switch on: this parses native/src/ops.h, common.h and matmul.h and compares
 * every enum entry with lib/backend/cuda/op-codes.ts (the one TypeScript copy, which the emulated
 * addon of the tests imports too). Runs without a GPU or nvcc.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { BINARY, DT, MATMUL_PRECISION, MAX_RANK, REDUCE, UNARY } from '../lib/backend/cuda/op-codes.js';

const header = (name: string) => readFileSync(fileURLToPath(new URL(`../native/src/${name}`, import.meta.url)), 'utf8');

/** `PREFIX_NAME = 12` entries of one C++ enum, keyed by NAME. */
function enumEntries(source: string, enumName: string, prefix: string): Record<string, number> {
  const body = new RegExp(`enum\\s+${enumName}\\s*:\\s*int\\s*\\{([^}]*)\\}`).exec(source);
  assert.ok(body, `enum ${enumName} not found`);
  const out: Record<string, number> = {};
  for (const m of body[1].matchAll(new RegExp(`\\b${prefix}_([A-Z0-9_]+)\\s*=\\s*(\\d+)`, 'g'))) out[m[1]] = Number(m[2]);
  assert.ok(Object.keys(out).length > 0, `enum ${enumName} has no ${prefix}_ entries`);
  return out;
}

test('unary, binary and reduce op codes equal native/src/ops.h', () => {
  const ops = header('ops.h');
  assert.deepEqual({ ...UNARY }, enumEntries(ops, 'UnaryOp', 'U'));
  assert.deepEqual({ ...BINARY }, enumEntries(ops, 'BinaryOp', 'B'));
  assert.deepEqual({ ...REDUCE }, enumEntries(ops, 'ReduceOp', 'R'));
});

test('dtype codes and MAX_RANK equal native/src/common.h', () => {
  const common = header('common.h');
  const dt = enumEntries(common, 'DType', 'DT');
  assert.deepEqual({ float32: dt.FLOAT32, int32: dt.INT32 }, { ...DT });
  assert.equal(Number(/constexpr int MAX_RANK = (\d+);/.exec(common)?.[1]), MAX_RANK);
});

test('matmul precision codes equal native/src/matmul.h', () => {
  const mm = enumEntries(header('matmul.h'), 'MatmulPrecision', 'MM');
  assert.deepEqual({ tf32: mm.TF32, fp32: mm.FP32, bf16: mm.BF16, fp16: mm.FP16 }, { ...MATMUL_PRECISION });
});
