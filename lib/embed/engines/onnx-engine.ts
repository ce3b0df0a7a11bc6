/**
 * The ONNX Runtime inference engine: the model exported to an ONNX graph with its current weights
 * (lib/models/onnx: exporter, disk cache by weights hash), run by onnxruntime-node's CPU execution
 * provider with one intra-op thread per core. By default the fused graph on packed tokens (no
 * padding rows computed; the last layer for [CLS] only where the pooling reads nothing else), with
 * the standard graph for the batches it cannot take (./graph-feeds.ts); `graph: 'standard'` for
 * standard operators only. It keeps the model's tfjs weights (the
 * model may train between batches); a model that is only encoded can be loaded without them
 * (./onnx-inference-model.ts). Inputs go in as int64 (the convention of HF's ONNX
 * exports), outputs come back as tfjs tensors so pooling stays one implementation
 * (../pooling.ts).
 *
 * The graph holds a copy of the weights, so the engine remembers the tfjs dataId of every
 * parameter it exported: when training has assigned new values since (a Variable gets a new
 * dataId on assign), the next batch exports the new weights first. A cached graph ONNX Runtime
 * refuses to load is rebuilt once, and the log says which.
 */
import { availableParallelism } from 'node:os';
import { cachedOnnxGraph, type CachedOnnxGraph, type OnnxGraphCacheOptions } from '../../models/onnx/graph-cache.js';
import { ONNX_INPUTS, type OnnxExporter, type OnnxExportOptions } from '../../models/onnx/exporter.js';
import { DEFAULT_EXTERNAL_DATA_ABOVE, encodeOnnxModel } from '../../models/onnx/model-file.js';
import type { TextModel, TokenBatch } from '../../models/types.js';
import type { OrtModule } from './onnx-runtime.js';
import { engineOutput, graphVariant, outputNames, packBatch, packedFeeds, paddedFeeds, variantKey, type GraphVariant, type PaddedInput } from './graph-feeds.js';
import { cutBelowTop, type EngineOutput, type EngineRunOptions, type InferenceEngine } from './types.js';

const PADDED_INPUTS: PaddedInput[] = [ONNX_INPUTS.inputIds, ONNX_INPUTS.attentionMask, ONNX_INPUTS.tokenTypeIds].map((name) => ({ name, type: 'int64' as const }));

export interface OnnxEngineOptions {
  /**
   * Where exported graphs are cached and how much of them to keep (lib/models/onnx/graph-cache.ts);
   * `false` exports to memory and never touches the disk: for weights that change between uses
   * (the trainer's dev evaluations), where a cached graph would never be read again. A model whose
   * weights pass 2 GiB (protobuf's limit on one message) still goes through the disk cache.
   */
  cache?: Omit<OnnxGraphCacheOptions, 'log'> | false;
  /** Intra-op threads (default: one per core, os.availableParallelism()). */
  threads?: number;
  /**
   * Which graph: 'fused' (default), ONNX Runtime's operators on packed tokens where the exporter
   * has them (batches it cannot take run on the standard graph), or 'standard' ONNX operators
   * only (what any ONNX runtime runs; the reference for parity).
   */
  graph?: 'fused' | 'standard';
}

type Session = Awaited<ReturnType<OrtModule['InferenceSession']['create']>>;

interface LoadedGraph {
  session: Session;
  graph: Pick<CachedOnnxGraph, 'outputs'>;
}

export class OnnxEngine implements InferenceEngine {
  readonly name = 'onnx' as const;
  readonly threads: number;
  readonly fused: boolean;
  private readonly graphs = new Map<string, Promise<LoadedGraph>>();
  /** dataId of every parameter when the graphs were exported. */
  private exportedWeights = new Map<string, object>();

  constructor(
    private readonly model: TextModel,
    private readonly exporter: OnnxExporter,
    private readonly runtime: { ort: OrtModule; version: string },
    private readonly opts: OnnxEngineOptions = {},
    private readonly log: (line: string) => void = () => {},
  ) {
    this.threads = opts.threads ?? availableParallelism();
    this.fused = (opts.graph ?? 'fused') === 'fused';
  }

  get description(): string {
    return `ONNX Runtime ${this.runtime.version} (onnxruntime-node), CPU, ${this.threads} thread${this.threads === 1 ? '' : 's'}, ${this.fused ? 'fused' : 'standard'} graph`;
  }

  private weightsChanged(): boolean {
    const params = this.model.params;
    if (params.size !== this.exportedWeights.size) return true;
    for (const [name, v] of params) if (this.exportedWeights.get(name) !== (v as unknown as { dataId: object }).dataId) return true;
    return false;
  }

  private sessionOptions() {
    return {
      executionProviders: ['cpu'],
      intraOpNumThreads: this.threads,
      interOpNumThreads: 1,
      executionMode: 'sequential' as const,
      graphOptimizationLevel: 'all' as const,
      logSeverityLevel: 3 as const,
    };
  }

  private async createSession(path: string): Promise<Session> {
    return this.runtime.ort.InferenceSession.create(path, this.sessionOptions());
  }

  private async load(v: GraphVariant): Promise<LoadedGraph> {
    const options: OnnxExportOptions = { hiddenStates: v.hiddenStates, fused: v.inputs === 'packed', ...(v.rows === 'first' ? { rows: 'first' as const } : {}), ...(v.layers !== undefined ? { layers: v.layers } : {}) };
    // In memory the weights are inline, in one protobuf message, which cannot pass 2 GiB (BERT-large
    // in float32 is 1.3 GB); a larger model goes through the disk cache, which writes external data.
    const bytes = [...this.model.params.values()].reduce((n, p) => n + 4 * p.size, 0);
    if (this.opts.cache === false && bytes <= DEFAULT_EXTERNAL_DATA_ABOVE) {
      const { model: onnx, ...outputs } = this.exporter.export(this.model, options);
      const session = await this.runtime.ort.InferenceSession.create(encodeOnnxModel(onnx), this.sessionOptions());
      return { session, graph: { outputs } };
    }
    const cache = { ...(this.opts.cache || {}), log: this.log };
    let graph = cachedOnnxGraph(this.model, this.exporter, options, cache);
    try {
      return { session: await this.createSession(graph.path), graph };
    } catch (e) {
      graph = cachedOnnxGraph(this.model, this.exporter, options, { ...cache, rebuild: (e as Error).message.split('\n')[0] });
      return { session: await this.createSession(graph.path), graph };
    }
  }

  /** The loaded graph of this variant, exporting it first if needed. */
  private async graph(v: GraphVariant): Promise<LoadedGraph> {
    if (this.weightsChanged()) {
      await this.release();
      this.exportedWeights = new Map([...this.model.params].map(([n, p]) => [n, (p as unknown as { dataId: object }).dataId]));
    }
    const key = variantKey(v);
    let g = this.graphs.get(key);
    if (!g) {
      g = this.load(v);
      this.graphs.set(key, g);
      g.catch(() => this.graphs.delete(key));
    }
    return g;
  }

  async run(batch: TokenBatch, opts: EngineRunOptions): Promise<EngineOutput> {
    // the fused graph takes packed tokens; a batch it cannot take runs on the standard graph
    const packed = this.fused ? packBatch(batch) : undefined;
    const v = graphVariant(this.fused, cutBelowTop(opts, this.model.numLayers), packed);
    const { session, graph } = await this.graph(v);
    const { ort } = this.runtime;
    const feeds = v.inputs === 'packed' ? packedFeeds(ort, batch, packed!, session.inputNames) : paddedFeeds(ort, batch, PADDED_INPUTS);
    const out = await session.run(feeds, outputNames(graph.outputs, v.hiddenStates));
    return engineOutput(out, graph.outputs, v, batch, packed);
  }

  private async release(): Promise<void> {
    const pending = [...this.graphs.values()];
    this.graphs.clear();
    for (const p of pending) {
      try {
        await (await p).session.release();
      } catch {
        /* a graph that never loaded has nothing to release */
      }
    }
  }

  async dispose(): Promise<void> {
    await this.release();
    this.exportedWeights.clear();
  }
}
