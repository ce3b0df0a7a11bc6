/**
 * Snappy decompression (the raw block format of google/snappy's format_description.txt), for the
 * LevelDB table blocks of a tensor bundle's `.index`: whether TensorFlow compresses them has
 * changed between releases (tensor_bundle.cc's TableBuilderOptions; the TF 1.12 bundle in
 * test/fixtures/tf-bundles has uncompressed blocks, the TF 2.14 one snappy blocks), so a reader
 * needs the decoder, never the encoder.
 *
 * Format: a varint32 giving the uncompressed length, then elements, each a tag byte whose low two
 * bits say what follows:
 *   00 literal: length - 1 in the upper six bits, or (60..63) in the next 1..4 little-endian bytes
 *   01 copy:    length 4 + bits 2..4, offset bits 5..7 (high) and the next byte (low), 11 bits
 *   10 copy:    length 1 + upper six bits, offset in the next 2 little-endian bytes
 *   11 copy:    length 1 + upper six bits, offset in the next 4 little-endian bytes
 * A copy repeats `length` bytes starting `offset` bytes back; it may overlap its own output
 * (offset < length repeats a pattern), so it is copied byte by byte in that case.
 */

/** Thrown for malformed input; the caller adds where the bytes came from. */
export class SnappyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SnappyError';
  }
}

/** The uncompressed bytes of one snappy block. */
export function snappyDecompress(input: Uint8Array): Uint8Array {
  let p = 0;
  // Preamble: varint32 uncompressed length.
  let length = 0;
  for (let shift = 0; ; shift += 7) {
    if (p >= input.byteLength) throw new SnappyError('cut short inside the length preamble');
    if (shift > 28) throw new SnappyError('length preamble longer than 5 bytes');
    const b = input[p++];
    length += (b & 0x7f) * 2 ** shift;
    if (!(b & 0x80)) break;
  }
  if (length > 0xffffffff) throw new SnappyError(`length preamble ${length} exceeds 2^32 - 1`);
  const out = new Uint8Array(length);
  let o = 0;
  const need = (n: number, what: string) => {
    if (p + n > input.byteLength) throw new SnappyError(`cut short inside ${what} at byte ${p}`);
  };
  while (p < input.byteLength) {
    const tag = input[p++];
    const kind = tag & 3;
    if (kind === 0) {
      let len = tag >>> 2;
      if (len >= 60) {
        const extra = len - 59;
        need(extra, 'a literal length');
        len = 0;
        for (let k = 0; k < extra; k++) len += input[p + k] * 2 ** (8 * k);
        p += extra;
      }
      len += 1;
      need(len, 'a literal');
      if (o + len > length) throw new SnappyError(`a literal at byte ${p} overruns the stated length ${length}`);
      out.set(input.subarray(p, p + len), o);
      p += len;
      o += len;
      continue;
    }
    let len: number;
    let offset: number;
    if (kind === 1) {
      need(1, 'a copy');
      len = 4 + ((tag >>> 2) & 7);
      offset = ((tag >>> 5) << 8) | input[p++];
    } else if (kind === 2) {
      need(2, 'a copy');
      len = (tag >>> 2) + 1;
      offset = input[p] | (input[p + 1] << 8);
      p += 2;
    } else {
      need(4, 'a copy');
      len = (tag >>> 2) + 1;
      offset = (input[p] | (input[p + 1] << 8) | (input[p + 2] << 16) | (input[p + 3] << 24)) >>> 0;
      p += 4;
    }
    if (offset === 0 || offset > o) throw new SnappyError(`a copy at byte ${p} reaches ${offset} bytes back with only ${o} written`);
    if (o + len > length) throw new SnappyError(`a copy at byte ${p} overruns the stated length ${length}`);
    if (offset >= len) {
      out.copyWithin(o, o - offset, o - offset + len);
      o += len;
    } else {
      for (let k = 0; k < len; k++, o++) out[o] = out[o - offset];
    }
  }
  if (o !== length) throw new SnappyError(`decompresses to ${o} bytes, the preamble says ${length}`);
  return out;
}
