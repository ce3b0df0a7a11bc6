/**
 * The ONNX Runtime inference engine: the model exported to an ONNX graph with its current weights
 * (lib/models/onnx: exporter, disk cache by weights hash; by default the graph with ONNX Runtime's
 * fused operators, `graph: 'standard'` for standard operators only), run by onnxruntime-node's CPU
 * execution provider with one intra-op thread per core. It keeps the model's tfjs weights (the
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
import { tf } from '../../backend/index.js';
import { cachedOnnxGraph, type CachedOnnxGraph, type OnnxGraphCacheOptions } from '../../models/onnx/graph-cache.js';
import { ONNX_INPUTS, type OnnxExporter } from '../../models/onnx/exporter.js';
import { DEFAULT_EXTERNAL_DATA_ABOVE, encodeOnnxModel } from '../../models/onnx/model-file.js';
import type { TextModel, TokenBatch } from '../../models/types.js';
import type { OrtModule } from './onnx-runtime.js';
import type { EngineOutput, EngineRunOptions, InferenceEngine } from './types.js';

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
   * Which graph: 'fused' (default) with ONNX Runtime's fused com.microsoft operators (Attention,
   * SkipLayerNormalization, EmbedLayerNormalization, BiasGelu) where the exporter has them, or
   * 'standard' ONNX operators only (what any ONNX runtime runs; the reference for parity).
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
  private readonly graphs = new Map<boolean, Promise<LoadedGraph>>();
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

  private async load(hiddenStates: boolean): Promise<LoadedGraph> {
    // In memory the weights are inline, in one protobuf message, which cannot pass 2 GiB (BERT-large
    // in float32 is 1.3 GB); a larger model goes through the disk cache, which writes external data.
    const bytes = [...this.model.params.values()].reduce((n, v) => n + 4 * v.size, 0);
    if (this.opts.cache === false && bytes <= DEFAULT_EXTERNAL_DATA_ABOVE) {
      const { model: onnx, ...outputs } = this.exporter.export(this.model, { hiddenStates, fused: this.fused });
      const session = await this.runtime.ort.InferenceSession.create(encodeOnnxModel(onnx), this.sessionOptions());
      return { session, graph: { outputs } };
    }
    const cache = { ...(this.opts.cache || {}), log: this.log };
    const options = { hiddenStates, fused: this.fused };
    let graph = cachedOnnxGraph(this.model, this.exporter, options, cache);
    try {
      return { session: await this.createSession(graph.path), graph };
    } catch (e) {
      graph = cachedOnnxGraph(this.model, this.exporter, options, { ...cache, rebuild: (e as Error).message.split('\n')[0] });
      return { session: await this.createSession(graph.path), graph };
    }
  }

  /** The loaded graph for this variant (with or without hidden states), exporting it first if needed. */
  private async graph(hiddenStates: boolean): Promise<LoadedGraph> {
    if (this.weightsChanged()) {
      await this.release();
      this.exportedWeights = new Map([...this.model.params].map(([n, v]) => [n, (v as unknown as { dataId: object }).dataId]));
    }
    let g = this.graphs.get(hiddenStates);
    if (!g) {
      g = this.load(hiddenStates);
      this.graphs.set(hiddenStates, g);
      g.catch(() => this.graphs.delete(hiddenStates));
    }
    return g;
  }

  async run(batch: TokenBatch, opts: EngineRunOptions): Promise<EngineOutput> {
    const { session, graph } = await this.graph(opts.hiddenStates);
    const { ort } = this.runtime;
    const dims = [batch.batch, batch.seqLen];
    const int64 = (a: Int32Array) => new ort.Tensor('int64', BigInt64Array.from(a, (x) => BigInt(x)), dims);
    const feeds = {
      [ONNX_INPUTS.inputIds]: int64(batch.inputIds),
      [ONNX_INPUTS.attentionMask]: int64(batch.attentionMask),
      [ONNX_INPUTS.tokenTypeIds]: int64(batch.tokenTypeIds),
    };
    const names = opts.hiddenStates ? [...graph.outputs.hiddenStates, ...(graph.outputs.poolerOutput ? [graph.outputs.poolerOutput] : [])] : [graph.outputs.lastHiddenState];
    const out = await session.run(feeds, names);
    const tensor = <T extends tf.Tensor>(name: string): T => {
      const t = out[name];
      return tf.tensor(t.data as Float32Array, t.dims as number[], 'float32') as T;
    };
    if (!opts.hiddenStates) return { lastHiddenState: tensor(graph.outputs.lastHiddenState), hiddenStates: [] };
    const hiddenStates = graph.outputs.hiddenStates.map((n) => tensor<tf.Tensor3D>(n));
    return {
      lastHiddenState: hiddenStates[hiddenStates.length - 1],
      hiddenStates,
      poolerOutput: graph.outputs.poolerOutput ? tensor<tf.Tensor2D>(graph.outputs.poolerOutput) : undefined,
    };
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
