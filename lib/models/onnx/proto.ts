/**
 * The part of onnx.proto (github.com/onnx/onnx, onnx/onnx.proto, proto2) that an exported graph
 * uses, as a protobufjs JSON descriptor: ModelProto, GraphProto, NodeProto, AttributeProto,
 * TensorProto (inline raw_data or external data), ValueInfoProto, TypeProto.Tensor,
 * TensorShapeProto, OperatorSetIdProto, StringStringEntryProto. Field numbers and types are
 * onnx.proto's; names are protobufjs's camelCase of them. protobufjs does the wire format.
 *
 * Messages and fields not listed here (sparse tensors, training info, sequence and map types,
 * functions) are not needed to describe a feed-forward graph over dense tensors; a decoder that
 * meets them skips them, as protobuf readers do with unknown fields.
 */
import protobuf from 'protobufjs/light.js';

/** TensorProto.DataType values used here. */
export const ONNX_DTYPE = { float: 1, int8: 3, int32: 6, int64: 7 } as const;
export type OnnxElemType = (typeof ONNX_DTYPE)[keyof typeof ONNX_DTYPE];

/** AttributeProto.AttributeType values used here. */
export const ONNX_ATTRIBUTE_TYPE = { float: 1, int: 2, string: 3, tensor: 4, floats: 6, ints: 7 } as const;

/** TensorProto.DataLocation. */
export const ONNX_DATA_LOCATION = { default: 0, external: 1 } as const;

const DESCRIPTOR = {
  nested: {
    onnx: {
      nested: {
        StringStringEntryProto: {
          fields: { key: { type: 'string', id: 1 }, value: { type: 'string', id: 2 } },
        },
        OperatorSetIdProto: {
          fields: { domain: { type: 'string', id: 1 }, version: { type: 'int64', id: 2 } },
        },
        TensorShapeProto: {
          fields: { dim: { rule: 'repeated', type: 'Dimension', id: 1 } },
          nested: {
            Dimension: {
              oneofs: { value: { oneof: ['dimValue', 'dimParam'] } },
              fields: { dimValue: { type: 'int64', id: 1 }, dimParam: { type: 'string', id: 2 }, denotation: { type: 'string', id: 3 } },
            },
          },
        },
        TypeProto: {
          oneofs: { value: { oneof: ['tensorType'] } },
          fields: { tensorType: { type: 'Tensor', id: 1 }, denotation: { type: 'string', id: 6 } },
          nested: {
            Tensor: {
              fields: { elemType: { type: 'int32', id: 1 }, shape: { type: 'TensorShapeProto', id: 2 } },
            },
          },
        },
        ValueInfoProto: {
          fields: { name: { type: 'string', id: 1 }, type: { type: 'TypeProto', id: 2 }, docString: { type: 'string', id: 3 } },
        },
        TensorProto: {
          fields: {
            dims: { rule: 'repeated', type: 'int64', id: 1 },
            dataType: { type: 'int32', id: 2 },
            floatData: { rule: 'repeated', type: 'float', id: 4, options: { packed: true } },
            int32Data: { rule: 'repeated', type: 'int32', id: 5, options: { packed: true } },
            int64Data: { rule: 'repeated', type: 'int64', id: 7, options: { packed: true } },
            name: { type: 'string', id: 8 },
            rawData: { type: 'bytes', id: 9 },
            docString: { type: 'string', id: 12 },
            externalData: { rule: 'repeated', type: 'StringStringEntryProto', id: 13 },
            dataLocation: { type: 'int32', id: 14 },
          },
        },
        AttributeProto: {
          fields: {
            name: { type: 'string', id: 1 },
            f: { type: 'float', id: 2 },
            i: { type: 'int64', id: 3 },
            s: { type: 'bytes', id: 4 },
            t: { type: 'TensorProto', id: 5 },
            floats: { rule: 'repeated', type: 'float', id: 7 },
            ints: { rule: 'repeated', type: 'int64', id: 8 },
            docString: { type: 'string', id: 13 },
            type: { type: 'int32', id: 20 },
          },
        },
        NodeProto: {
          fields: {
            input: { rule: 'repeated', type: 'string', id: 1 },
            output: { rule: 'repeated', type: 'string', id: 2 },
            name: { type: 'string', id: 3 },
            opType: { type: 'string', id: 4 },
            attribute: { rule: 'repeated', type: 'AttributeProto', id: 5 },
            docString: { type: 'string', id: 6 },
            domain: { type: 'string', id: 7 },
          },
        },
        GraphProto: {
          fields: {
            node: { rule: 'repeated', type: 'NodeProto', id: 1 },
            name: { type: 'string', id: 2 },
            initializer: { rule: 'repeated', type: 'TensorProto', id: 5 },
            docString: { type: 'string', id: 10 },
            input: { rule: 'repeated', type: 'ValueInfoProto', id: 11 },
            output: { rule: 'repeated', type: 'ValueInfoProto', id: 12 },
            valueInfo: { rule: 'repeated', type: 'ValueInfoProto', id: 13 },
          },
        },
        ModelProto: {
          fields: {
            irVersion: { type: 'int64', id: 1 },
            producerName: { type: 'string', id: 2 },
            producerVersion: { type: 'string', id: 3 },
            domain: { type: 'string', id: 4 },
            modelVersion: { type: 'int64', id: 5 },
            docString: { type: 'string', id: 6 },
            graph: { type: 'GraphProto', id: 7 },
            opsetImport: { rule: 'repeated', type: 'OperatorSetIdProto', id: 8 },
            metadataProps: { rule: 'repeated', type: 'StringStringEntryProto', id: 14 },
          },
        },
      },
    },
  },
};

const root = protobuf.Root.fromJSON(DESCRIPTOR);

/** The ModelProto message type: `encode(model).finish()` gives the .onnx bytes, `decode` reads them. */
export const ModelProto = root.lookupType('onnx.ModelProto');
export const TensorProto = root.lookupType('onnx.TensorProto');

// Plain-object shapes of the messages (what ModelProto.encode accepts and toObject returns).

export interface StringStringEntry {
  key: string;
  value: string;
}

export interface TensorMessage {
  name: string;
  dims: number[];
  dataType: OnnxElemType;
  rawData?: Uint8Array;
  externalData?: StringStringEntry[];
  dataLocation?: number;
}

export interface AttributeMessage {
  name: string;
  type: number;
  f?: number;
  i?: number;
  s?: Uint8Array;
  t?: TensorMessage;
  floats?: number[];
  ints?: number[];
}

export interface NodeMessage {
  name: string;
  opType: string;
  domain?: string;
  input: string[];
  output: string[];
  attribute: AttributeMessage[];
}

export interface DimensionMessage {
  dimValue?: number;
  dimParam?: string;
}

export interface ValueInfoMessage {
  name: string;
  type: { tensorType: { elemType: OnnxElemType; shape: { dim: DimensionMessage[] } } };
}

export interface GraphMessage {
  name: string;
  node: NodeMessage[];
  initializer: TensorMessage[];
  input: ValueInfoMessage[];
  output: ValueInfoMessage[];
  docString?: string;
}

export interface ModelMessage {
  irVersion: number;
  producerName: string;
  producerVersion: string;
  docString?: string;
  graph: GraphMessage;
  opsetImport: Array<{ domain: string; version: number }>;
  metadataProps?: StringStringEntry[];
}
