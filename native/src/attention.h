// Fused scaled dot-product attention, forward and backward, flash-style: key tiles in shared
// memory, an online softmax, probabilities recomputed in backward from the per-row maximum m and
// normaliser l, so no [T, S] tensor is ever written. lib/ops/flash-attention-reference.ts is the
// same algorithm tile for tile in TypeScript (tested against plain attention on the CPU).
#pragma once

#include "common.h"

namespace angle {

// q [B, H, T, D]; k, v [B, Hkv, S, D] (query head h reads key/value head h / (H / Hkv)); an
// additive mask [maskB, 1, maskT, S] with maskB in {1, B} and maskT in {1, T}, or none (nullptr,
// maskB = maskT = 0). D <= 128. Dropout of the probabilities with the dropout kernel's rule for
// element (b, h, t, s) of [B, H, T, S] under `seed` (rate 0: none).
struct AttentionShape {
  int64_t B, H, Hkv, T, S, D, maskB, maskT;
  float scale, dropoutRate;
  uint64_t seed;
  // Inside a captured graph: the device word the seed is added to (graph.h capturedSeed); else null.
  const uint64_t* seedBase = nullptr;
};

// out [B, H, T, D]; m, l [B, H, T]: each row's maximum score and softmax normaliser (for backward).
void attentionForward(const float* q, const float* k, const float* v, const float* mask, float* out, float* m, float* l,
                      const AttentionShape& shape);

// dq [B, H, T, D]; dk, dv [B, Hkv, S, D]; rowDot [B, H, T] is scratch (rowsum(dout * out)).
void attentionBackward(const float* q, const float* k, const float* v, const float* mask, const float* out, const float* dout,
                       const float* m, const float* l, float* rowDot, float* dq, float* dk, float* dv, const AttentionShape& shape);

}  // namespace angle
