/**
 * The windows a RAN layer walks over (ran.py:569-604, the golden set's convention 4): chunks
 * [0, W), [W, 2W), ... cut from the PADDED length T, the last chunk [(n-1)W, T); when there are at
 * least two chunks and the last is shorter than min_window_size it is merged into the previous one;
 * T <= W is one window. Every row of a batch shares them, so padding that adds or re-cuts windows
 * changes that row's numbers (convention 9): a batch must be computed exactly as padded.
 */
import { InputError } from '../../util/errors.js';

/** [start, end) of each window, in order. */
export type RanWindow = readonly [number, number];

export function ranWindows(seqLen: number, windowSize: number, minWindowSize: number): RanWindow[] {
  // T = 0 fails in Keras too (K.arange(0, 1, 0), ran.py:482-485).
  if (!Number.isInteger(seqLen) || seqLen < 1) throw new InputError(`RanNet needs at least one token per row (padded length ${seqLen})`);
  const out: Array<[number, number]> = [];
  for (let s = 0; s < seqLen; s += windowSize) out.push([s, Math.min(s + windowSize, seqLen)]);
  if (out.length >= 2) {
    const last = out[out.length - 1];
    if (last[1] - last[0] < minWindowSize) {
      out.pop();
      out[out.length - 1][1] = seqLen;
    }
  }
  return out;
}
