/**
 * Operation and dtype codes of the native addon, mirroring native/src/ops.h, common.h and
 * matmul.h: the one TypeScript copy, used by the backend and by the emulated addon of the tests
 * (test/cuda-op-codes.test.ts parses those headers and checks that both sides agree).
 * `COUNT` is one past the last code, as in the headers.
 */
export const DT = { float32: 0, int32: 1 } as const;

/** Highest tensor rank the native kernels index (common.h MAX_RANK). */
export const MAX_RANK = 6;

export const UNARY = {
  NEG: 0, ABS: 1, EXP: 2, LOG: 3, SQRT: 4, RSQRT: 5, SQUARE: 6, TANH: 7, SIGMOID: 8, ERF: 9, RELU: 10, SIGN: 11,
  COS: 12, SIN: 13, ACOS: 14, ASIN: 15, ATAN: 16, FLOOR: 17, CEIL: 18, ROUND: 19, RECIPROCAL: 20, LOG1P: 21,
  EXPM1: 22, SOFTPLUS: 23, STEP: 24, ELU: 25, RELU6: 26, CLIP: 27, LEAKYRELU: 28, ISNAN: 29, ISINF: 30,
  ISFINITE: 31, LOGICAL_NOT: 32, COSH: 33, SINH: 34, TAN: 35, ASINH: 36, ACOSH: 37, ATANH: 38, SELU: 39,
  IDENTITY: 40, SCALE_SHIFT: 41, COUNT: 42,
} as const;

export const BINARY = {
  ADD: 0, SUB: 1, MUL: 2, DIV: 3, FLOORDIV: 4, MOD: 5, POW: 6, MAX: 7, MIN: 8, SQDIFF: 9, ATAN2: 10, EQ: 11,
  NE: 12, LT: 13, LE: 14, GT: 15, GE: 16, AND: 17, OR: 18, PRELU: 19, ELU_GRAD: 20, COUNT: 21,
} as const;

export const REDUCE = { SUM: 0, MEAN: 1, MAX: 2, MIN: 3, PROD: 4, ANY: 5, ALL: 6, ARGMAX: 7, ARGMIN: 8, COUNT: 9 } as const;

export const MATMUL_PRECISION = { tf32: 0, fp32: 1, bf16: 2, fp16: 3 } as const;
