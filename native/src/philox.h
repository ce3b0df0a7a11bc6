// Philox4x32-10 (Salmon et al. 2011), the counter-based generator of device dropout and random
// tensors: a pure function of (counter, seed), so a mask is redrawn in backward instead of stored.
// lib/ops/philox-dropout-mask.ts is the same function on the host (checked against Random123's
// known answers), which lets the CPU reference of fused attention drop what the device drops.
#pragma once

#include <stdint.h>

namespace angle {

__device__ __forceinline__ uint4 philox(uint64_t counter, uint64_t seed) {
  uint32_t c0 = (uint32_t)counter, c1 = (uint32_t)(counter >> 32), c2 = 0, c3 = 0;
  uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
  for (int round = 0; round < 10; ++round) {
    uint32_t hi0 = __umulhi(0xD2511F53u, c0), lo0 = 0xD2511F53u * c0;
    uint32_t hi1 = __umulhi(0xCD9E8D57u, c2), lo1 = 0xCD9E8D57u * c2;
    uint32_t n0 = hi1 ^ c1 ^ k0, n2 = hi0 ^ c3 ^ k1;
    c0 = n0;
    c1 = lo1;
    c2 = n2;
    c3 = lo0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return make_uint4(c0, c1, c2, c3);
}

// A uniform float in [0, 1) from the top 24 bits of a word.
__device__ __forceinline__ float toUniform(uint32_t b) { return (float)(b >> 8) * (1.0f / 16777216.0f); }

// Whether dropout keeps element `i` of a tensor: the rule of the dropout kernel (fused.cu),
// element i reads word i mod 4 of philox(⌊i / 4⌋, seed).
__device__ __forceinline__ bool dropoutKeeps(int64_t i, uint64_t seed, float rate) {
  uint4 r = philox((uint64_t)(i >> 2), seed);
  int w = (int)(i & 3);
  uint32_t word = w == 0 ? r.x : w == 1 ? r.y : w == 2 ? r.z : r.w;
  return toUniform(word) >= rate;
}

}  // namespace angle
