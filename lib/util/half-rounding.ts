/**
 * float32 values rounded to the nearest bf16 or fp16 value and returned as float32: what a 16-bit
 * tensor-core matmul does to its float32 inputs (cuBLASLt's CUBLAS_COMPUTE_32F_FAST_16BF / _16F
 * down-convert them, then accumulate in float32). The CPU emulation of 16-bit training
 * (lib/backend/matmul-rounding.ts) applies these to every matmul input, so the golden parity can
 * run here under a 16-bit tolerance before a GPU sees it.
 *
 * Both round to nearest, ties to even, on the float32 bits (as __float2bfloat16_rn and
 * __float2half_rn); NaN stays NaN, fp16 overflows to ±infinity at 65520 and has subnormals
 * below 2⁻¹⁴.
 */
const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** x rounded to bf16 (8 significant bits), as a float32 value. */
export function roundToBf16(x: number): number {
  f32[0] = x;
  const bits = u32[0];
  if ((bits & 0x7f800000) === 0x7f800000) return f32[0];
  u32[0] = (bits + 0x7fff + ((bits >>> 16) & 1)) & 0xffff0000;
  return f32[0];
}

/** x rounded to fp16 (11 significant bits, subnormals below 2⁻¹⁴, ±infinity from 65520), as a float32 value. */
export function roundToFp16(x: number): number {
  f32[0] = x;
  const v = f32[0];
  if (!Number.isFinite(v) || v === 0) return v;
  const a = Math.abs(v);
  if (a >= 65520) return v > 0 ? Infinity : -Infinity;
  if (a < 2 ** -14) {
    // Multiples of 2⁻²⁴; a / 2⁻²⁴ is exact in a double.
    const q = a * 2 ** 24;
    const fl = Math.floor(q);
    const r = q - fl > 0.5 || (q - fl === 0.5 && fl % 2 === 1) ? fl + 1 : fl;
    return Math.sign(v) * r * 2 ** -24;
  }
  const bits = u32[0];
  u32[0] = (bits + 0x0fff + ((bits >>> 13) & 1)) & ~0x1fff;
  return f32[0];
}

export type HalfPrecision = 'bf16' | 'fp16';

/** Rounds every element in place. */
export function roundArrayTo(precision: HalfPrecision, values: Float32Array): Float32Array {
  const r = precision === 'bf16' ? roundToBf16 : roundToFp16;
  for (let i = 0; i < values.length; i++) values[i] = r(values[i]);
  return values;
}
