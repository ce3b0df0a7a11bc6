/**
 * mulberry32 (Tommy Ettinger's 32-bit generator): a tiny seeded stream for the places that only
 * need draws that are the same on every machine (fixtures, synthetic weights, a classifier's
 * initialisation), not any library's random numbers. One implementation; each caller maps the
 * uint32 values to the interval it needs.
 */

/** The raw stream: uint32 values in [0, 2³²). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

/** Uniform draws in [0, 1): the raw stream divided by 2³². */
export function mulberry32Uniform(seed: number): () => number {
  const next = mulberry32(seed);
  return () => next() / 4294967296;
}
