/**
 * The block size the `cuda` backend's caching allocator reserves for a request of `bytes`
 * (native/src/allocator.cu `sizeClass`, mirrored here so that the shape-only backend can say what
 * `cudaMemoryStats().inUse` would be): at least 256 bytes; above that, four classes per power of
 * two — the request rounded up to a multiple of 2^(⌊log2(bytes − 1)⌋ − 2). A block is at most 25 %
 * larger than the request (just above a power of two) and about 12 % on average.
 */
export function deviceSizeClass(bytes: number): number {
  if (!(Number.isInteger(bytes) && bytes >= 0)) throw new Error(`deviceSizeClass: ${bytes} is not a byte count`);
  if (bytes <= 256) return 256;
  const lead = Math.floor(Math.log2(bytes - 1));
  // log2 in floating point can land one below an exact power of two; correct it with integers.
  const exact = 2 ** (lead + 1) <= bytes - 1 ? lead + 1 : lead;
  if (exact < 3) return 256;
  const step = 2 ** (exact - 2);
  const rounded = Math.ceil(bytes / step) * step;
  return rounded < 256 ? 256 : rounded;
}
