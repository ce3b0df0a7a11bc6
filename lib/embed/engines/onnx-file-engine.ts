/**
 * ONNX Runtime over encoder graphs given as files: a model's own export (a sentence-transformers
 * repository's `onnx/model.onnx`) or a graph our exporter wrote to the cache, with no tfjs model
 * behind it (./onnx-inference-model.ts). One graph per variant (last hidden state only, or with
 * every layer's hidden states), each loaded on first use.
 *
 * Before a graph is used its inputs and outputs are checked against what the encoders feed and
 * read (checkEncoderGraph): `input_ids` and `attention_mask` (and `token_type_ids` if the graph has
 * it) as int64 or int32 [batch, sequence], nothing else required; a float32 [batch, sequence,
 * hidden] output `last_hidden_state` (sentence-transformers' own exports name it
 * `token_embeddings`). A graph that wants something else is refused with its file and what it has.
 */
import { availableParallelism } from 'node:os';
import { tf } from '../../backend/index.js';
import type { TokenBatch } from '../../models/types.js';
import { InputError, UnavailableError } from '../../util/errors.js';
import type { OrtModule } from './onnx-runtime.js';
import type { EngineOutput, EngineRunOptions, InferenceEngine } from './types.js';

type Session = Awaited<ReturnType<OrtModule['InferenceSession']['create']>>;

/** One graph file and the output names to read. */
export interface OnnxGraphFile {
  path: string;
  /** Output with [batch, sequence, hidden]; undefined: found by checkEncoderGraph. */
  lastHiddenState?: string;
  /** hidden_states[0..numLayers], when the graph has them. */
  hiddenStates?: string[];
  poolerOutput?: string;
}

/** Where the graphs come from: a fixed file per variant, or a function that provides it (exporting it if needed). */
export interface OnnxGraphSource {
  /** The graph for this variant, or undefined when there is none (a model's own file has no hidden states). */
  graph(hiddenStates: boolean): Promise<OnnxGraphFile | undefined>;
  /** One line on where the graphs come from, for the engine's description. */
  readonly what: string;
}

export interface OnnxFileEngineOptions {
  threads?: number;
  /** Hidden size the model declares (config.json): a graph whose output says otherwise is refused. */
  hiddenSize?: number;
  /** Extra ONNX Runtime session options (e.g. a saved optimised model path in tests). */
  sessionOptions?: Record<string, unknown>;
}

const INT_TYPES = ['int64', 'int32'];
const LAST_HIDDEN_NAMES = ['last_hidden_state', 'token_embeddings'];

interface CheckedGraph {
  session: Session;
  inputs: { name: string; type: 'int64' | 'int32' }[];
  lastHiddenState: string;
  file: OnnxGraphFile;
}

/**
 * Checks a loaded graph's inputs and outputs against what the encoders feed and read; returns
 * the inputs to feed (with their integer type) and the output to read. Throws an InputError naming
 * the file otherwise.
 */
export function checkEncoderGraph(session: Pick<Session, 'inputMetadata' | 'outputMetadata'>, file: OnnxGraphFile, hiddenSize?: number): { inputs: { name: string; type: 'int64' | 'int32' }[]; lastHiddenState: string } {
  const describe = (m: readonly { name: string; isTensor: boolean; type?: string; shape?: readonly (number | string)[] }[]) =>
    m.map((v) => (v.isTensor ? `${v.name} ${v.type}[${(v.shape ?? []).join(', ')}]` : `${v.name} (not a tensor)`)).join(', ');
  const fail = (what: string): never => {
    throw new InputError(`ONNX graph does not fit a text encoder: ${what} (inputs: ${describe(session.inputMetadata)}; outputs: ${describe(session.outputMetadata)})`, { file: file.path });
  };
  const known = ['input_ids', 'attention_mask', 'token_type_ids'];
  const inputs: { name: string; type: 'int64' | 'int32' }[] = [];
  for (const m of session.inputMetadata) {
    if (!known.includes(m.name)) fail(`it needs an input '${m.name}' that an encoder does not have (it feeds ${known.join(', ')})`);
    if (!m.isTensor || !INT_TYPES.includes(m.type) || (m.shape.length !== 0 && m.shape.length !== 2)) return fail(`input '${m.name}' must be an int64 or int32 [batch, sequence] tensor`);
    inputs.push({ name: m.name, type: m.type as 'int64' | 'int32' });
  }
  for (const need of ['input_ids', 'attention_mask']) if (!inputs.some((i) => i.name === need)) fail(`it has no input '${need}'`);
  const name = file.lastHiddenState ?? LAST_HIDDEN_NAMES.find((n) => session.outputMetadata.some((m) => m.name === n));
  if (!name) return fail(`it has no output ${LAST_HIDDEN_NAMES.map((n) => `'${n}'`).join(' or ')} (the transformer's last hidden states; pooling is ours)`);
  const out = session.outputMetadata.find((m) => m.name === name);
  if (!out?.isTensor || out.type !== 'float32') return fail(`output '${name}' must be a float32 tensor`);
  if (out.shape.length !== 0) {
    if (out.shape.length !== 3) fail(`output '${name}' must be [batch, sequence, hidden], it has rank ${out.shape.length}`);
    const h = out.shape[2];
    if (hiddenSize !== undefined && typeof h === 'number' && h !== hiddenSize) fail(`output '${name}' has hidden size ${h}, the model's config.json says ${hiddenSize}`);
  }
  return { inputs, lastHiddenState: name };
}

export class OnnxFileEngine implements InferenceEngine {
  readonly name = 'onnx' as const;
  readonly threads: number;
  private readonly loaded = new Map<boolean, Promise<CheckedGraph | undefined>>();

  constructor(
    private readonly source: OnnxGraphSource,
    private readonly runtime: { ort: OrtModule; version: string },
    private readonly opts: OnnxFileEngineOptions = {},
  ) {
    this.threads = opts.threads ?? availableParallelism();
  }

  get description(): string {
    return `ONNX Runtime ${this.runtime.version} (onnxruntime-node), CPU, ${this.threads} thread${this.threads === 1 ? '' : 's'}, ${this.source.what}`;
  }

  private async load(hiddenStates: boolean): Promise<CheckedGraph | undefined> {
    const file = await this.source.graph(hiddenStates);
    if (!file) return undefined;
    const session = await this.runtime.ort.InferenceSession.create(file.path, {
      executionProviders: ['cpu'],
      intraOpNumThreads: this.threads,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      graphOptimizationLevel: 'all',
      logSeverityLevel: 3,
      ...this.opts.sessionOptions,
    });
    try {
      return { session, file, ...checkEncoderGraph(session, file, this.opts.hiddenSize) };
    } catch (e) {
      await session.release();
      throw e;
    }
  }

  private graph(hiddenStates: boolean): Promise<CheckedGraph | undefined> {
    let g = this.loaded.get(hiddenStates);
    if (!g) {
      g = this.load(hiddenStates);
      this.loaded.set(hiddenStates, g);
      g.catch(() => this.loaded.delete(hiddenStates));
    }
    return g;
  }

  /** Loads and checks the graph of this variant now (the first batch would otherwise). */
  async prepare(hiddenStates = false): Promise<void> {
    await this.graph(hiddenStates);
  }

  async run(batch: TokenBatch, opts: EngineRunOptions): Promise<EngineOutput> {
    const g = await this.graph(opts.hiddenStates);
    if (!g) throw new UnavailableError(`this model's ONNX graph (${this.source.what}) has only the last hidden state: poolings that need every layer's hidden states or the pooler output (first_last_avg, cls_pooler) cannot run on it`);
    const { ort } = this.runtime;
    const dims = [batch.batch, batch.seqLen];
    const data: Record<string, Int32Array> = { input_ids: batch.inputIds, attention_mask: batch.attentionMask, token_type_ids: batch.tokenTypeIds };
    const feeds = Object.fromEntries(g.inputs.map(({ name, type }) => [name, type === 'int64' ? new ort.Tensor('int64', BigInt64Array.from(data[name], (x) => BigInt(x)), dims) : new ort.Tensor('int32', Int32Array.from(data[name]), dims)]));
    const names = opts.hiddenStates ? [...(g.file.hiddenStates ?? []), ...(g.file.poolerOutput ? [g.file.poolerOutput] : [])] : [g.lastHiddenState];
    const out = await g.session.run(feeds, names);
    const tensor = <T extends tf.Tensor>(name: string): T => {
      const t = out[name];
      return tf.tensor(t.data as Float32Array, t.dims as number[], 'float32') as T;
    };
    if (!opts.hiddenStates) return { lastHiddenState: tensor(g.lastHiddenState), hiddenStates: [] };
    const hiddenStates = (g.file.hiddenStates ?? []).map((n) => tensor<tf.Tensor3D>(n));
    return { lastHiddenState: hiddenStates[hiddenStates.length - 1], hiddenStates, poolerOutput: g.file.poolerOutput ? tensor<tf.Tensor2D>(g.file.poolerOutput) : undefined };
  }

  async dispose(): Promise<void> {
    const pending = [...this.loaded.values()];
    this.loaded.clear();
    for (const p of pending) {
      try {
        await (await p)?.session.release();
      } catch {
        /* never loaded */
      }
    }
  }
}
