/**
 * ONNX Runtime over encoder graphs given as files: a model's own export (a sentence-transformers
 * repository's `onnx/model.onnx`) or a graph our exporter wrote to the cache, with no tfjs model
 * behind it (./onnx-inference-model.ts). One graph per variant (./graph-feeds.ts: packed or
 * padded inputs, last hidden state only or every layer's, the [CLS]-only last layer), each loaded
 * on first use; our fused export takes packed tokens, a model's own file padded ones.
 *
 * Before a graph is used its inputs and outputs are checked against what the encoders feed and
 * read (checkEncoderGraph): for a padded graph `input_ids` and `attention_mask` (and
 * `token_type_ids` if the graph has it) as int64 or int32 [batch, sequence], nothing else
 * required, and a float32 [batch, sequence, hidden] output `last_hidden_state` (sentence-transformers'
 * own exports name it `token_embeddings`); a packed graph takes PACKED_INPUTS only. A graph that
 * wants something else is refused with its file and what it has.
 */
import { availableParallelism } from 'node:os';
import { PACKED_INPUTS, type OnnxInputLayout } from '../../models/onnx/exporter.js';
import type { TokenBatch } from '../../models/types.js';
import { InputError, UnavailableError } from '../../util/errors.js';
import type { OrtModule } from './onnx-runtime.js';
import { engineOutput, graphVariant, outputNames, packBatch, packedFeeds, paddedFeeds, variantKey, type GraphVariant, type PaddedInput } from './graph-feeds.js';
import { cutBelowTop, type EngineOutput, type EngineRunOptions, type InferenceEngine } from './types.js';

type Session = Awaited<ReturnType<OrtModule['InferenceSession']['create']>>;

/** One graph file and the output names to read. */
export interface OnnxGraphFile {
  path: string;
  /** Its input layout (lib/models/onnx/exporter.ts); default `padded`, a model's own file always is. */
  inputs?: OnnxInputLayout;
  /** `first`: the last hidden state of each sequence's first token only. */
  rows?: 'all' | 'first';
  /** Output with [batch, sequence, hidden]; undefined: found by checkEncoderGraph. */
  lastHiddenState?: string;
  /** hidden_states[0..numLayers], when the graph has them. */
  hiddenStates?: string[];
  poolerOutput?: string;
}

/** Where the graphs come from: a fixed file per variant, or a function that provides it (exporting it if needed). */
export interface OnnxGraphSource {
  /** The graph for this variant, or undefined when there is none (a model's own file has no hidden states). */
  graph(variant: GraphVariant): Promise<OnnxGraphFile | undefined>;
  /** Whether it has packed graphs (our fused export); a model's own file has not. */
  readonly packed: boolean;
  /** One line on where the graphs come from, for the engine's description. */
  readonly what: string;
}

export interface OnnxFileEngineOptions {
  threads?: number;
  /** Hidden size the model declares (config.json): a graph whose output says otherwise is refused. */
  hiddenSize?: number;
  /** Layers the model declares (config.json): a cut at this depth is the full graph. */
  numLayers?: number;
  /** Extra ONNX Runtime session options (e.g. a saved optimised model path in tests). */
  sessionOptions?: Record<string, unknown>;
}

const INT_TYPES = ['int64', 'int32'];
const LAST_HIDDEN_NAMES = ['last_hidden_state', 'token_embeddings'];

interface CheckedGraph {
  session: Session;
  inputs: PaddedInput[];
  lastHiddenState: string;
  file: OnnxGraphFile;
}

/**
 * Checks a loaded graph's inputs and outputs against what the encoders feed and read; returns
 * the inputs to feed (with their integer type) and the output to read. Throws an InputError naming
 * the file otherwise.
 */
export function checkEncoderGraph(session: Pick<Session, 'inputMetadata' | 'outputMetadata'>, file: OnnxGraphFile, hiddenSize?: number): { inputs: PaddedInput[]; lastHiddenState: string } {
  const describe = (m: readonly { name: string; isTensor: boolean; type?: string; shape?: readonly (number | string)[] }[]) =>
    m.map((v) => (v.isTensor ? `${v.name} ${v.type}[${(v.shape ?? []).join(', ')}]` : `${v.name} (not a tensor)`)).join(', ');
  const fail = (what: string): never => {
    throw new InputError(`ONNX graph does not fit a text encoder: ${what} (inputs: ${describe(session.inputMetadata)}; outputs: ${describe(session.outputMetadata)})`, { file: file.path });
  };
  if (file.inputs === 'packed') {
    // our exporter's packed graph: its inputs are PACKED_INPUTS, fed by ./graph-feeds.ts
    const known: string[] = Object.values(PACKED_INPUTS);
    for (const m of session.inputMetadata) if (!known.includes(m.name)) fail(`packed graph input '${m.name}' is not one of ${known.join(', ')}`);
    const name = file.lastHiddenState ?? 'last_hidden_state';
    if (!session.outputMetadata.some((m) => m.name === name)) fail(`it has no output '${name}'`);
    return { inputs: [], lastHiddenState: name };
  }
  const known = ['input_ids', 'attention_mask', 'token_type_ids'];
  const inputs: PaddedInput[] = [];
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
  private readonly loaded = new Map<string, Promise<CheckedGraph | undefined>>();

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

  private async load(v: GraphVariant): Promise<CheckedGraph | undefined> {
    const file = await this.source.graph(v);
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

  private graph(v: GraphVariant): Promise<CheckedGraph | undefined> {
    const key = variantKey(v);
    let g = this.loaded.get(key);
    if (!g) {
      g = this.load(v);
      this.loaded.set(key, g);
      g.catch(() => this.loaded.delete(key));
    }
    return g;
  }

  /**
   * Fails now, naming the file, where the first batch would: a model's own file is loaded and
   * checked (its session is the one the batches use); our export is written to the cache if it is
   * not there yet, but not loaded, since the pooling decides which variant the batches need and
   * every loaded session holds a copy of the weights.
   */
  async prepare(): Promise<void> {
    const plain: GraphVariant = { inputs: this.source.packed ? 'packed' : 'padded', hiddenStates: false, rows: 'all' };
    if (this.source.packed) await this.source.graph(plain);
    else await this.graph(plain);
  }

  async run(batch: TokenBatch, opts: EngineRunOptions): Promise<EngineOutput> {
    const packed = this.source.packed ? packBatch(batch) : undefined;
    const v = graphVariant(this.source.packed, cutBelowTop(opts, this.opts.numLayers ?? Infinity), packed);
    const g = await this.graph(v);
    if (!g) throw new UnavailableError(`this model's ONNX graph (${this.source.what}) has only the last hidden state: poolings that need every layer's hidden states or the pooler output (first_last_avg, cls_pooler), and a truncated layer, cannot run on it`);
    const { ort } = this.runtime;
    const feeds = v.inputs === 'packed' ? packedFeeds(ort, batch, packed!, g.session.inputNames) : paddedFeeds(ort, batch, g.inputs);
    const outputs = { lastHiddenState: g.lastHiddenState, hiddenStates: g.file.hiddenStates, poolerOutput: g.file.poolerOutput };
    const out = await g.session.run(feeds, outputNames(outputs, v.hiddenStates));
    return engineOutput(out, outputs, v, batch, packed);
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
