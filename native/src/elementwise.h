// Elementwise kernels: unary, binary with N-d broadcasting, select, cast, fill, range.
#pragma once

#include "common.h"

namespace angle {

void unary(int op, DType in, DType out, const void* x, void* y, int64_t n, float alpha, float beta);

// y[i] = a[offA(i)] op b[offB(i)] over the index space `d` (the output's shape).
void binary(int op, DType in, DType out, const void* a, const void* b, void* y, const Dims& d, const Strides& sa,
            const Strides& sb);

// y[i] = cond[i] != 0 ? a[i] : b[i], broadcast like binary.
void selectWhere(DType t, const int32_t* cond, const void* a, const void* b, void* y, const Dims& d, const Strides& sc,
                 const Strides& sa, const Strides& sb);

// toBool: y = (x != 0) as 0/1 int32.
void cast(DType in, DType out, const void* x, void* y, int64_t n, bool toBool);

void fill(DType t, void* y, int64_t n, double value);

void range(DType t, void* y, int64_t n, double start, double step);

// How one operand is indexed from the output's linear index (exposed for the tests' benefit).
enum IndexMode : int { IX_CONTIG = 0, IX_SCALAR = 1, IX_MOD = 2, IX_DIV = 3, IX_GENERAL = 4 };
IndexMode indexMode(const Dims& d, const Strides& s, int64_t* param);

}  // namespace angle
