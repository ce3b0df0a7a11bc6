/**
 * The two protocol buffers of a TensorFlow tensor bundle's index, decoded by protobufjs from a
 * descriptor of the fields read (as ../onnx/proto.ts reads onnx.proto):
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
import protobuf from 'protobufjs/light.js';

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

/**
 * The messages as a protobufjs JSON descriptor (field numbers and types are the .proto files';
 * names protobufjs's camelCase), as ../onnx/proto.ts describes onnx.proto: protobufjs does the
 * wire format (packed or unpacked repeated fields, unknown fields skipped). Enums are read as
 * int32 and checked here; TensorSliceProto is only counted, so its records stay bytes.
 */
const DESCRIPTOR = {
  nested: {
    tensorflow: {
      nested: {
        VersionDef: {
          fields: { producer: { type: 'int32', id: 1 }, minConsumer: { type: 'int32', id: 2 }, badConsumers: { rule: 'repeated', type: 'int32', id: 3 } },
        },
        BundleHeaderProto: {
          fields: { numShards: { type: 'int32', id: 1 }, endianness: { type: 'int32', id: 2 }, version: { type: 'VersionDef', id: 3 } },
        },
        TensorShapeProto: {
          fields: { dim: { rule: 'repeated', type: 'Dim', id: 2 }, unknownRank: { type: 'bool', id: 3 } },
          nested: { Dim: { fields: { size: { type: 'int64', id: 1 }, name: { type: 'string', id: 2 } } } },
        },
        BundleEntryProto: {
          fields: {
            dtype: { type: 'int32', id: 1 },
            shape: { type: 'TensorShapeProto', id: 2 },
            shardId: { type: 'int32', id: 3 },
            offset: { type: 'int64', id: 4 },
            size: { type: 'int64', id: 5 },
            crc32c: { type: 'fixed32', id: 6 },
            slices: { rule: 'repeated', type: 'bytes', id: 7 },
          },
        },
      },
    },
  },
};

const root = protobuf.Root.fromJSON(DESCRIPTOR);
const HEADER = root.lookupType('tensorflow.BundleHeaderProto');
const ENTRY = root.lookupType('tensorflow.BundleEntryProto');

/** An int64 as protobufjs gives it (a number, or a Long where long.js is installed). */
type Int64 = number | { toString(): string };

/** `type` decoded from `b`; protobufjs's errors (bytes cut short, a bad wire type) as ProtoError. */
function decode<T>(type: protobuf.Type, b: Uint8Array): T {
  try {
    return type.decode(b) as unknown as T;
  } catch (e) {
    throw new ProtoError((e as Error).message);
  }
}

/** An int64 field as a number; a value beyond 2^53 is refused rather than rounded. */
function int64(v: Int64 | undefined, what: string): number {
  if (v === undefined) return 0;
  const big = BigInt(v.toString());
  if (big > BigInt(Number.MAX_SAFE_INTEGER) || big < -BigInt(Number.MAX_SAFE_INTEGER)) throw new ProtoError(`${what} ${big} is beyond 2^53`);
  return Number(big);
}

export function decodeBundleHeader(b: Uint8Array): BundleHeader {
  const m = decode<{ numShards?: number; endianness?: number; version?: { producer?: number; minConsumer?: number; badConsumers?: number[] } }>(HEADER, b);
  const e = m.endianness ?? 0;
  if (e !== 0 && e !== 1) throw new ProtoError(`endianness ${e} is neither LITTLE (0) nor BIG (1)`);
  return {
    numShards: m.numShards ?? 0,
    endianness: e === 0 ? 'little' : 'big',
    producer: m.version?.producer ?? 0,
    minConsumer: m.version?.minConsumer ?? 0,
    badConsumers: [...(m.version?.badConsumers ?? [])],
  };
}

export function decodeBundleEntry(b: Uint8Array): BundleEntry {
  const m = decode<{ dtype?: number; shape?: { dim?: Array<{ size?: Int64 }>; unknownRank?: boolean }; shardId?: number; offset?: Int64; size?: Int64; crc32c?: number; slices?: Uint8Array[] }>(ENTRY, b);
  return {
    dtypeCode: m.dtype ?? 0,
    shape: (m.shape?.dim ?? []).map((d) => int64(d.size, 'shape.dim.size')),
    shardId: m.shardId ?? 0,
    offset: int64(m.offset, 'offset'),
    size: int64(m.size, 'size'),
    maskedCrc32c: m.crc32c ?? 0,
    sliceCount: m.slices?.length ?? 0,
    unknownRank: m.shape?.unknownRank ?? false,
  };
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
