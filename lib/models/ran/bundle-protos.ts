/**
 * The two protocol buffers of a TensorFlow tensor bundle's index, decoded by hand from the wire
 * format (a few fields; a protobufjs schema would be longer than the decoder):
 *
 *   BundleHeaderProto (the value of the empty key; tensorflow/core/protobuf/tensor_bundle.proto)
 *     1 num_shards int32, 2 endianness enum (0 LITTLE, 1 BIG), 3 version VersionDef
 *     VersionDef (framework/versions.proto): 1 producer, 2 min_consumer, 3 repeated bad_consumers
 *   BundleEntryProto (the value of every other key, the tensor's name)
 *     1 dtype DataType, 2 shape TensorShapeProto, 3 shard_id int32, 4 offset int64, 5 size int64,
 *     6 crc32c fixed32 (masked CRC-32C of the tensor's bytes), 7 repeated slices TensorSliceProto
 *     TensorShapeProto (framework/tensor_shape.proto): 2 repeated dim {1 size int64, 2 name},
 *     3 unknown_rank bool
 *
 * Unknown fields are skipped, as protobuf readers do. DataType numbers are framework/types.proto's.
 */

/** Thrown for malformed bytes; the caller adds the file and the key. */
export class ProtoError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProtoError';
  }
}

/** The bundle format version this reader implements (tensor_bundle.cc kTensorBundleVersion). */
export const BUNDLE_VERSION = 1;

export interface BundleHeader {
  numShards: number;
  /** 'little' or 'big' (only little-endian bundles are read). */
  endianness: 'little' | 'big';
  producer: number;
  minConsumer: number;
  badConsumers: number[];
}

export interface BundleEntry {
  /** DataType number (1 float, 9 int64, 7 string, 21 variant, ...). */
  dtypeCode: number;
  /** Dimension sizes; [] for a scalar. */
  shape: number[];
  shardId: number;
  offset: number;
  size: number;
  /** Masked CRC-32C of the tensor's bytes in its data shard. */
  maskedCrc32c: number;
  /** Number of TensorSliceProto records: > 0 for a partitioned variable's full-tensor entry. */
  sliceCount: number;
  /** True when the shape proto says the rank is unknown. */
  unknownRank: boolean;
}

const WIRE_VARINT = 0;
const WIRE_FIXED64 = 1;
const WIRE_BYTES = 2;
const WIRE_FIXED32 = 5;

/** One field of a message: its number, wire type and payload (a varint as bigint, or bytes). */
interface Field {
  number: number;
  wire: number;
  varint?: bigint;
  bytes?: Uint8Array;
  fixed32?: number;
}

function* fields(b: Uint8Array): Generator<Field> {
  let p = 0;
  const varint = (): bigint => {
    let v = 0n;
    for (let shift = 0n; ; shift += 7n) {
      if (p >= b.byteLength) throw new ProtoError(`cut short inside a varint at byte ${p}`);
      if (shift > 63n) throw new ProtoError(`varint at byte ${p} is longer than 10 bytes`);
      const x = b[p++];
      v |= BigInt(x & 0x7f) << shift;
      if (!(x & 0x80)) return v;
    }
  };
  while (p < b.byteLength) {
    const tag = varint();
    const number = Number(tag >> 3n);
    const wire = Number(tag & 7n);
    if (number === 0) throw new ProtoError(`field number 0 at byte ${p}`);
    if (wire === WIRE_VARINT) yield { number, wire, varint: varint() };
    else if (wire === WIRE_FIXED64) {
      if (p + 8 > b.byteLength) throw new ProtoError(`cut short inside field ${number}`);
      p += 8;
    } else if (wire === WIRE_BYTES) {
      const len = Number(varint());
      if (p + len > b.byteLength) throw new ProtoError(`field ${number} states ${len} bytes, ${b.byteLength - p} remain`);
      yield { number, wire, bytes: b.subarray(p, p + len) };
      p += len;
    } else if (wire === WIRE_FIXED32) {
      if (p + 4 > b.byteLength) throw new ProtoError(`cut short inside field ${number}`);
      yield { number, wire, fixed32: (b[p] | (b[p + 1] << 8) | (b[p + 2] << 16) | (b[p + 3] << 24)) >>> 0 };
      p += 4;
    } else throw new ProtoError(`field ${number} has wire type ${wire}, which this format never uses`);
  }
}

function expectWire(f: Field, wire: number, what: string): void {
  if (f.wire !== wire) throw new ProtoError(`${what} (field ${f.number}) has wire type ${f.wire}, expected ${wire}`);
}

/** A varint field as a signed 64-bit integer (int32/int64 negatives are sign-extended to 10 bytes). */
function signed(f: Field, what: string): number {
  expectWire(f, WIRE_VARINT, what);
  const v = BigInt.asIntN(64, f.varint!);
  if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < -BigInt(Number.MAX_SAFE_INTEGER)) throw new ProtoError(`${what} ${v} is beyond 2^53`);
  return Number(v);
}

/** Packed (wire type 2) or unpacked repeated int32 values of one field occurrence. */
function repeatedInt32(f: Field, what: string): number[] {
  if (f.wire === WIRE_VARINT) return [signed(f, what)];
  expectWire(f, WIRE_BYTES, what);
  const out: number[] = [];
  let p = 0;
  const b = f.bytes!;
  while (p < b.byteLength) {
    let v = 0n;
    for (let shift = 0n; ; shift += 7n) {
      if (p >= b.byteLength || shift > 63n) throw new ProtoError(`${what}: bad packed varint`);
      const x = b[p++];
      v |= BigInt(x & 0x7f) << shift;
      if (!(x & 0x80)) break;
    }
    out.push(Number(BigInt.asIntN(64, v)));
  }
  return out;
}

export function decodeBundleHeader(b: Uint8Array): BundleHeader {
  const h: BundleHeader = { numShards: 0, endianness: 'little', producer: 0, minConsumer: 0, badConsumers: [] };
  for (const f of fields(b)) {
    if (f.number === 1) h.numShards = signed(f, 'num_shards');
    else if (f.number === 2) {
      const e = signed(f, 'endianness');
      if (e !== 0 && e !== 1) throw new ProtoError(`endianness ${e} is neither LITTLE (0) nor BIG (1)`);
      h.endianness = e === 0 ? 'little' : 'big';
    } else if (f.number === 3) {
      expectWire(f, WIRE_BYTES, 'version');
      for (const v of fields(f.bytes!)) {
        if (v.number === 1) h.producer = signed(v, 'version.producer');
        else if (v.number === 2) h.minConsumer = signed(v, 'version.min_consumer');
        else if (v.number === 3) h.badConsumers.push(...repeatedInt32(v, 'version.bad_consumers'));
      }
    }
  }
  return h;
}

export function decodeBundleEntry(b: Uint8Array): BundleEntry {
  const e: BundleEntry = { dtypeCode: 0, shape: [], shardId: 0, offset: 0, size: 0, maskedCrc32c: 0, sliceCount: 0, unknownRank: false };
  for (const f of fields(b)) {
    switch (f.number) {
      case 1:
        e.dtypeCode = signed(f, 'dtype');
        break;
      case 2:
        expectWire(f, WIRE_BYTES, 'shape');
        for (const s of fields(f.bytes!)) {
          if (s.number === 2) {
            expectWire(s, WIRE_BYTES, 'shape.dim');
            let size = 0;
            for (const d of fields(s.bytes!)) if (d.number === 1) size = signed(d, 'shape.dim.size');
            e.shape.push(size);
          } else if (s.number === 3) e.unknownRank = signed(s, 'shape.unknown_rank') !== 0;
        }
        break;
      case 3:
        e.shardId = signed(f, 'shard_id');
        break;
      case 4:
        e.offset = signed(f, 'offset');
        break;
      case 5:
        e.size = signed(f, 'size');
        break;
      case 6:
        expectWire(f, WIRE_FIXED32, 'crc32c');
        e.maskedCrc32c = f.fixed32!;
        break;
      case 7:
        e.sliceCount++;
        break;
    }
  }
  return e;
}

/** A numeric DataType this reader returns, with its element size and typed-array constructor. */
export interface NumericDtype {
  name: TfNumericDtype;
  bytes: number;
}

export type TfNumericDtype = 'float32' | 'float64' | 'int32' | 'uint8' | 'int16' | 'int8' | 'int64' | 'bool' | 'bfloat16' | 'uint16' | 'float16' | 'uint32' | 'uint64';

/** framework/types.proto numbers of the dtypes stored as plain little-endian arrays. */
export const NUMERIC_DTYPES: ReadonlyMap<number, NumericDtype> = new Map<number, NumericDtype>([
  [1, { name: 'float32', bytes: 4 }],
  [2, { name: 'float64', bytes: 8 }],
  [3, { name: 'int32', bytes: 4 }],
  [4, { name: 'uint8', bytes: 1 }],
  [5, { name: 'int16', bytes: 2 }],
  [6, { name: 'int8', bytes: 1 }],
  [9, { name: 'int64', bytes: 8 }],
  [10, { name: 'bool', bytes: 1 }],
  [14, { name: 'bfloat16', bytes: 2 }],
  [17, { name: 'uint16', bytes: 2 }],
  [19, { name: 'float16', bytes: 2 }],
  [22, { name: 'uint32', bytes: 4 }],
  [23, { name: 'uint64', bytes: 8 }],
]);

/** Names of the other DataTypes, for messages that refuse them. */
export const OTHER_DTYPE_NAMES: ReadonlyMap<number, string> = new Map([
  [7, 'string'],
  [8, 'complex64'],
  [11, 'qint8'],
  [12, 'quint8'],
  [13, 'qint32'],
  [15, 'qint16'],
  [16, 'quint16'],
  [18, 'complex128'],
  [20, 'resource'],
  [21, 'variant'],
]);

export function dtypeName(code: number): string {
  return NUMERIC_DTYPES.get(code)?.name ?? OTHER_DTYPE_NAMES.get(code) ?? `DataType ${code}`;
}
