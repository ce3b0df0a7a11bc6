/**
 * Building an ONNX graph node by node: typed graph inputs and outputs (symbolic dimensions such as
 * `batch` stay dynamic), initializers that reference the caller's arrays (no copy until the model
 * is serialised), nodes with typed attributes, and unique value names. `model()` returns the plain
 * ModelProto object that ./model-file.ts serialises with protobufjs.
 *
 * Value names are the caller's where given (graph inputs, outputs, initializers under their
 * checkpoint names) and `<hint>_<n>` otherwise, so a dumped graph reads like the model code.
 */
import { ONNX_ATTRIBUTE_TYPE, ONNX_DTYPE, type AttributeMessage, type GraphMessage, type ModelMessage, type NodeMessage, type OnnxElemType, type TensorMessage, type ValueInfoMessage } from './proto.js';

/** A dimension: a fixed size, or a name for a size known only at run time. */
export type Dim = number | string;

export type InitializerData = Float32Array | Int32Array | BigInt64Array | Int8Array;

/** An attribute value, tagged with its ONNX type. */
export type Attribute = { f: number } | { i: number } | { s: string } | { floats: number[] } | { ints: number[] };

export interface NodeOptions {
  /** Output names; default one generated name. A number asks for that many generated names. */
  outputs?: string[] | number;
  /** Operator set domain: '' (ONNX) or e.g. 'com.microsoft'. */
  domain?: string;
}

function elemTypeOf(data: InitializerData): OnnxElemType {
  if (data instanceof Float32Array) return ONNX_DTYPE.float;
  if (data instanceof Int32Array) return ONNX_DTYPE.int32;
  if (data instanceof Int8Array) return ONNX_DTYPE.int8;
  return ONNX_DTYPE.int64;
}

function attributeMessage(name: string, a: Attribute): AttributeMessage {
  if ('f' in a) return { name, type: ONNX_ATTRIBUTE_TYPE.float, f: a.f };
  if ('i' in a) return { name, type: ONNX_ATTRIBUTE_TYPE.int, i: a.i };
  if ('s' in a) return { name, type: ONNX_ATTRIBUTE_TYPE.string, s: new TextEncoder().encode(a.s) };
  if ('floats' in a) return { name, type: ONNX_ATTRIBUTE_TYPE.floats, floats: a.floats };
  return { name, type: ONNX_ATTRIBUTE_TYPE.ints, ints: a.ints };
}

function valueInfo(name: string, elemType: OnnxElemType, dims: readonly Dim[]): ValueInfoMessage {
  return {
    name,
    type: { tensorType: { elemType, shape: { dim: dims.map((d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: d })) } } },
  };
}

export class OnnxGraphBuilder {
  private readonly nodes: NodeMessage[] = [];
  private readonly initializers: TensorMessage[] = [];
  private readonly inputs: ValueInfoMessage[] = [];
  private readonly outputs: ValueInfoMessage[] = [];
  private readonly used = new Set<string>();
  private readonly counters = new Map<string, number>();
  private readonly scalars = new Map<string, string>();

  constructor(readonly name: string) {}

  private claim(name: string): string {
    if (this.used.has(name)) throw new Error(`ONNX graph '${this.name}': value name '${name}' is used twice`);
    this.used.add(name);
    return name;
  }

  private fresh(hint: string): string {
    let n = this.counters.get(hint) ?? 0;
    let name: string;
    do name = `${hint}_${n++}`;
    while (this.used.has(name));
    this.counters.set(hint, n);
    return this.claim(name);
  }

  /** A graph input. */
  input(name: string, elemType: OnnxElemType, dims: readonly Dim[]): string {
    this.inputs.push(valueInfo(this.claim(name), elemType, dims));
    return name;
  }

  /** Declares an existing value a graph output (the name a caller fetches). */
  output(name: string, elemType: OnnxElemType, dims: readonly Dim[]): void {
    if (!this.used.has(name)) throw new Error(`ONNX graph '${this.name}': output '${name}' is not a value of the graph`);
    this.outputs.push(valueInfo(name, elemType, dims));
  }

  /** A constant tensor stored in the model. `data` is referenced, not copied, until serialisation. */
  initializer(name: string, data: InitializerData, dims: readonly number[]): string {
    return this.addInitializer(this.claim(name), data, dims);
  }

  /** A small constant (shapes, axes, scalars) under a generated name. */
  constant(hint: string, data: InitializerData, dims: readonly number[]): string {
    return this.addInitializer(this.fresh(hint), data, dims);
  }

  private addInitializer(name: string, data: InitializerData, dims: readonly number[]): string {
    const size = dims.reduce((a, b) => a * b, 1);
    if (size !== data.length) throw new Error(`ONNX initializer '${name}': ${data.length} values for shape [${dims.join(', ')}]`);
    this.initializers.push({ name, dims: [...dims], dataType: elemTypeOf(data), rawData: new Uint8Array(data.buffer, data.byteOffset, data.byteLength) });
    return name;
  }

  /** An int64 1-D constant, the type ONNX wants for shapes, axes and slice bounds. */
  int64s(hint: string, values: readonly number[]): string {
    return this.constant(hint, BigInt64Array.from(values.map(BigInt)), [values.length]);
  }

  /** A float32 scalar constant (one per hint and value, however often asked for). */
  scalar(hint: string, value: number): string {
    const key = `${hint}:${value}`;
    let name = this.scalars.get(key);
    if (name === undefined) {
      name = this.constant(hint, Float32Array.of(value), []);
      this.scalars.set(key, name);
    }
    return name;
  }

  /** Adds a node and returns its output names. An empty input name means an omitted optional input. */
  node(opType: string, inputs: readonly string[], attributes: Record<string, Attribute> = {}, opts: NodeOptions = {}): string[] {
    for (const i of inputs) if (i !== '' && !this.used.has(i)) throw new Error(`ONNX graph '${this.name}': ${opType} reads '${i}', which no input, initializer or node defines`);
    const outs = Array.isArray(opts.outputs)
      ? opts.outputs.map((o) => this.claim(o))
      : Array.from({ length: opts.outputs ?? 1 }, () => this.fresh(opType.toLowerCase()));
    this.nodes.push({
      name: this.fresh(`node_${opType}`),
      opType,
      domain: opts.domain ?? '',
      input: [...inputs],
      output: outs,
      attribute: Object.entries(attributes).map(([k, v]) => attributeMessage(k, v)),
    });
    return outs;
  }

  /** A node with one output. */
  op(opType: string, inputs: readonly string[], attributes: Record<string, Attribute> = {}, opts: Omit<NodeOptions, 'outputs'> & { output?: string } = {}): string {
    return this.node(opType, inputs, attributes, { domain: opts.domain, outputs: opts.output ? [opts.output] : 1 })[0];
  }

  /** Total bytes of initializer data. */
  initializerBytes(): number {
    return this.initializers.reduce((s, t) => s + (t.rawData?.byteLength ?? 0), 0);
  }

  graph(docString?: string): GraphMessage {
    if (this.outputs.length === 0) throw new Error(`ONNX graph '${this.name}' has no outputs`);
    return { name: this.name, node: this.nodes, initializer: this.initializers, input: this.inputs, output: this.outputs, docString };
  }

  /** The whole model: graph, IR version and operator sets (`{ '': 17 }`, plus e.g. `{ 'com.microsoft': 1 }`). */
  model(opts: { opsets: Record<string, number>; producer: string; producerVersion: string; docString?: string; metadata?: Record<string, string>; irVersion?: number }): ModelMessage {
    return {
      // IR 8 is the version that goes with opset 17 (onnx/docs/Versioning.md).
      irVersion: opts.irVersion ?? 8,
      producerName: opts.producer,
      producerVersion: opts.producerVersion,
      docString: opts.docString,
      graph: this.graph(),
      opsetImport: Object.entries(opts.opsets).map(([domain, version]) => ({ domain, version })),
      metadataProps: Object.entries(opts.metadata ?? {}).map(([key, value]) => ({ key, value })),
    };
  }
}
