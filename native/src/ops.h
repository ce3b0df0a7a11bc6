// Operation codes shared with TypeScript (lib/backend/cuda/op-codes.ts mirrors these numbers;
// test/cuda-op-codes.test.ts checks that both lists agree).
#pragma once

namespace angle {

enum UnaryOp : int {
  U_NEG = 0,
  U_ABS = 1,
  U_EXP = 2,
  U_LOG = 3,
  U_SQRT = 4,
  U_RSQRT = 5,
  U_SQUARE = 6,
  U_TANH = 7,
  U_SIGMOID = 8,
  U_ERF = 9,
  U_RELU = 10,
  U_SIGN = 11,
  U_COS = 12,
  U_SIN = 13,
  U_ACOS = 14,
  U_ASIN = 15,
  U_ATAN = 16,
  U_FLOOR = 17,
  U_CEIL = 18,
  U_ROUND = 19,
  U_RECIPROCAL = 20,
  U_LOG1P = 21,
  U_EXPM1 = 22,
  U_SOFTPLUS = 23,
  U_STEP = 24,        // x > 0 ? 1 : alpha (NaN stays NaN)
  U_ELU = 25,
  U_RELU6 = 26,
  U_CLIP = 27,        // clamp to [alpha, beta]
  U_LEAKYRELU = 28,   // x < 0 ? alpha * x : x
  U_ISNAN = 29,
  U_ISINF = 30,
  U_ISFINITE = 31,
  U_LOGICAL_NOT = 32,
  U_COSH = 33,
  U_SINH = 34,
  U_TAN = 35,
  U_ASINH = 36,
  U_ACOSH = 37,
  U_ATANH = 38,
  U_SELU = 39,
  U_IDENTITY = 40,
  U_SCALE_SHIFT = 41, // alpha * x + beta
  U_COUNT = 42
};

enum BinaryOp : int {
  B_ADD = 0,
  B_SUB = 1,
  B_MUL = 2,
  B_DIV = 3,
  B_FLOORDIV = 4,
  B_MOD = 5,
  B_POW = 6,
  B_MAX = 7,
  B_MIN = 8,
  B_SQDIFF = 9,
  B_ATAN2 = 10,
  B_EQ = 11,
  B_NE = 12,
  B_LT = 13,
  B_LE = 14,
  B_GT = 15,
  B_GE = 16,
  B_AND = 17,
  B_OR = 18,
  B_PRELU = 19,       // a < 0 ? a * b : a
  B_ELU_GRAD = 20,    // dy = a, y = b: y < 0 ? dy * (y + 1) : dy
  B_COUNT = 21
};

enum ReduceOp : int {
  R_SUM = 0,
  R_MEAN = 1,
  R_MAX = 2,
  R_MIN = 3,
  R_PROD = 4,
  R_ANY = 5,
  R_ALL = 6,
  R_ARGMAX = 7,
  R_ARGMIN = 8,
  R_COUNT = 9
};

}  // namespace angle
