/**
 * A text model loaded for encoding only, on ONNX Runtime, with its weights in memory once (in
 * ONNX Runtime) instead of twice (tfjs's copy beside the session's, which is what a model from
 * loadModel plus the ONNX engine holds): issue 29, items 3 and 4.
 *
 * Where the graph comes from (`graph` option):
 * - `own`: the folder's own ONNX export, `onnx/model.onnx` beside the weights (the layout
 *   sentence-transformers repositories ship; also in the Transformer module's folder), loaded
 *   directly after its inputs and outputs are checked (./onnx-file-engine.ts checkEncoderGraph).
 *   It holds the transformer only: pooling, and a sentence-transformers folder's own pipeline
 *   (pooling, Dense, Normalize), stay ours. It has no hidden states per layer, so poolings that
 *   need them are refused on it.
 * - `export`: our exporter's graph of the weights (`fused` or `standard`, optionally int8), found
 *   in the graph cache through an alias keyed by the weight files' sha256 and config
 *   (lib/models/onnx/graph-cache.ts), so a cached graph is used without building the tfjs model at
 *   all; when it is not cached yet, the tfjs model is built for as long as the export takes and
 *   disposed before ONNX Runtime loads the graph.
 * - `auto` (default): `own` when the folder has the file, else `export`.
 *
 * The model's `forward` and training hooks throw (there are no tfjs weights); the encoders find
 * its engine through `inferenceEngine` (./choose.ts). Its identity (`weightsSha256`) is that of
 * the files that compute the embeddings: the ONNX file for `own`, the weight files for `export`,
 * plus a sentence-transformers folder's module weights.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { tf } from '../../backend/index.js';
import { onnxExporterFor, ONNX_ARCHITECTURES, loadModel, resolveModelDir, type LoadModelOptions } from '../../models/auto.js';
import { cachedOnnxGraph, cachedOnnxGraphByAlias, onnxGraphAliasKey, rememberOnnxGraphAlias, type OnnxGraphCacheOptions } from '../../models/onnx/graph-cache.js';
import type { OnnxExportOptions } from '../../models/onnx/exporter.js';
import { openSafetensors } from '../../models/safetensors.js';
import { isSentenceTransformerFolder, readSentenceTransformerFolder } from '../../models/sentence-transformers/read.js';
import { HfTokenizer } from '../../models/tokenizers/hf.js';
import type { ForwardOptions, LoadedModel, ModelOutput, TextModel, TokenBatch } from '../../models/types.js';
import { weightFiles as findWeightFiles, weightsSha256 } from '../../models/weight-files.js';
import { resolveRepoFiles } from '../../hub/index.js';
import { InputError, UnavailableError } from '../../util/errors.js';
import { OnnxFileEngine, type OnnxGraphFile, type OnnxGraphSource } from './onnx-file-engine.js';
import { loadOnnxRuntime, ONNX_RUNTIME_MODULE } from './onnx-runtime.js';
import type { InferenceEngine } from './types.js';

/** Where a model's own ONNX export sits, relative to the repository (or Transformer module) folder. */
export const OWN_ONNX_FILE = join('onnx', 'model.onnx');

export interface OnnxInferenceLoadOptions extends Pick<LoadModelOptions, 'revision' | 'hub'> {
  /** `auto` (default), `own` or `export` (see the file comment). */
  graph?: 'auto' | 'own' | 'export';
  /** For `export`: ONNX Runtime's fused operators (default) or standard operators only. */
  fused?: boolean;
  /** For `export`: int8 dynamic quantisation of the dense layers (exploratory runs only; never the default). */
  quantize?: 'int8';
  /** Intra-op threads (default: one per core). */
  threads?: number;
  /** The graph cache (default: ANGLE_ONNX_CACHE, else <HF_HOME>/angle-onnx). */
  cache?: Omit<OnnxGraphCacheOptions, 'log'>;
  /** Where build and cache lines go (default: nowhere). */
  log?: (line: string) => void;
  /** Extra ONNX Runtime session options (tests save the optimised graph with it). */
  sessionOptions?: Record<string, unknown>;
  /** The module to load as ONNX Runtime (default onnxruntime-node). */
  onnxRuntimeModule?: string;
}

/** A TextModel with no tfjs weights: its forward passes are its ONNX Runtime engine's. */
export class OnnxInferenceModel implements TextModel {
  readonly params: ReadonlyMap<string, tf.Variable> = new Map();
  dropoutSeed = 0;
  dropoutCounter = 0;

  constructor(
    readonly architecture: string,
    readonly hiddenSize: number,
    readonly numLayers: number,
    readonly maxPositions: number,
    /** The engine every encoder of this model uses. */
    readonly inferenceEngine: InferenceEngine,
    private readonly parameterCount: number,
    /** Where the graph comes from ('own ONNX file …' or 'our … graph'). */
    readonly graphSource: string,
  ) {}

  private unavailable(what: string): never {
    throw new UnavailableError(`${what}: this model was loaded for ONNX Runtime inference only (${this.graphSource}); it holds no tfjs weights. Load it with loadModel for the tfjs forward or training`);
  }

  forward(_batch: TokenBatch, _opts?: ForwardOptions): ModelOutput {
    return this.unavailable('forward');
  }

  trainableParameters(): Map<string, tf.Variable> {
    return this.unavailable('trainableParameters');
  }

  setTrainable(): void {
    this.unavailable('setTrainable');
  }

  setDropout(): void {
    // no dropout in an inference graph
  }

  /** Parameters of the weight files (from their headers), or NaN when only an ONNX file was read. */
  numParameters(): number {
    return this.parameterCount;
  }

  dispose(): void {
    void this.inferenceEngine.dispose();
  }
}

/** A model that carries its own inference engine (an OnnxInferenceModel). */
export function ownInferenceEngine(model: TextModel): InferenceEngine | undefined {
  return model instanceof OnnxInferenceModel ? model.inferenceEngine : undefined;
}

function readJson(path: string): Record<string, unknown> {
  try {
    const v = JSON.parse(readFileSync(path, 'utf8')) as unknown;
    if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new Error('not a JSON object');
    return v as Record<string, unknown>;
  } catch (e) {
    throw new InputError(`model config is not readable JSON: ${(e as Error).message}`, { file: path });
  }
}

function positiveInt(config: Record<string, unknown>, keys: string[], file: string): number {
  for (const k of keys) {
    const v = config[k];
    if (typeof v === 'number' && Number.isInteger(v) && v > 0) return v;
  }
  throw new InputError(`config.json has no positive integer ${keys.join(' / ')}`, { file });
}

function countParameters(files: string[]): number {
  let n = 0;
  for (const f of files) {
    if (!f.endsWith('.safetensors')) return NaN;
    const r = openSafetensors(f);
    try {
      for (const t of r.tensors.values()) n += t.shape.reduce((a, b) => a * b, 1);
    } finally {
      r.close();
    }
  }
  return n;
}

/** The own ONNX file of a folder: at the root, or in the Transformer module's folder. */
function findOwnOnnx(root: string, modelDir: string): string | undefined {
  return [join(root, OWN_ONNX_FILE), join(modelDir, OWN_ONNX_FILE)].find((p) => existsSync(p));
}

/**
 * Loads a model directory or Hub id for encoding on ONNX Runtime only (see the file comment).
 * The result is a LoadedModel: give it to PooledSentenceEncoder and friends as usual.
 */
export async function loadOnnxInferenceModel(idOrPath: string, opts: OnnxInferenceLoadOptions = {}): Promise<LoadedModel<OnnxInferenceModel>> {
  const choice = opts.graph ?? 'auto';
  const runtime = await loadOnnxRuntime(opts.onnxRuntimeModule ?? ONNX_RUNTIME_MODULE);
  if ('error' in runtime) throw new UnavailableError(`ONNX Runtime inference is unavailable: ${runtime.error}`);
  const resolved = await resolveModelDir(idOrPath, opts);
  if (resolved.source === 'hub' && choice !== 'export') {
    // the own export is not among the files loadModel fetches
    await resolveRepoFiles({ ...opts.hub, repo: idOrPath, revision: resolved.commit ?? opts.revision, files: [], optionalFiles: ['onnx/model.onnx', 'onnx/model.onnx_data'] });
  }
  const st = isSentenceTransformerFolder(resolved.dir) ? readSentenceTransformerFolder(resolved.dir) : undefined;
  const modelDir = st?.transformerDir ?? resolved.dir;
  const configPath = join(modelDir, 'config.json');
  if (!existsSync(configPath)) throw new InputError('model directory has no config.json', { file: modelDir });
  const configText = readFileSync(configPath, 'utf8');
  const config = readJson(configPath);
  const architecture = typeof config.model_type === 'string' ? config.model_type : 'bert';
  const hiddenSize = positiveInt(config, ['hidden_size', 'd_model'], configPath);
  const numLayers = positiveInt(config, ['num_hidden_layers', 'n_layer', 'num_layers'], configPath);
  const maxPositions = positiveInt(config, ['max_position_embeddings', 'n_positions'], configPath);
  const tokenizer = HfTokenizer.fromDir(modelDir);
  const own = findOwnOnnx(resolved.dir, modelDir);
  if (choice === 'own' && !own) throw new InputError(`no ONNX export of its own (looked for ${OWN_ONNX_FILE} in the folder and its Transformer module)`, { file: resolved.dir });
  const useOwn = choice === 'own' || (choice === 'auto' && own !== undefined);
  if (useOwn && opts.quantize) throw new InputError('quantize applies to the graph our exporter writes (graph: export), not to a model’s own ONNX file', { file: own });
  const moduleFiles = st?.weightFiles ?? [];
  let source: OnnxGraphSource;
  let files: string[];
  let parameterCount: number;
  let identity: string | undefined;
  if (useOwn) {
    const file = own!;
    const data = `${file}_data`;
    files = [file, ...(existsSync(data) ? [data] : []), ...moduleFiles];
    parameterCount = NaN;
    const graph: OnnxGraphFile = { path: file };
    // A model's own file computes every layer and outputs the last: no hidden states, no cut.
    source = { what: `its own ONNX file ${OWN_ONNX_FILE}`, packed: false, graph: async (v) => (v.hiddenStates || v.layers !== undefined ? undefined : graph) };
  } else {
    const exporter = onnxExporterFor(architecture);
    if (!exporter) throw new UnavailableError(`no ONNX exporter for '${architecture}' models (there is one for ${ONNX_ARCHITECTURES.join(', ')}), and the folder has no ${OWN_ONNX_FILE}`);
    const weights = findWeightFiles(modelDir);
    const sha = await weightsSha256(weights);
    files = [...weights, ...moduleFiles];
    if (moduleFiles.length === 0) identity = sha;
    parameterCount = countParameters(weights);
    const fused = opts.fused ?? true;
    const cache = { ...opts.cache, log: opts.log };
    source = {
      what: `our ${fused ? 'fused' : 'standard'}${opts.quantize ? ' int8' : ''} graph of the weights`,
      // the fused graph takes packed tokens; batches it cannot take run on the standard graph
      packed: fused,
      graph: async (v) => {
        if (opts.quantize && v.inputs === 'padded') {
          throw new UnavailableError('the int8 graph takes packed tokens only, and this batch needs the padded graph (a pooling that reads padding slots, cls_avg_legacy, or a left-padded batch): encode it with the float32 graph');
        }
        const exportOpts: OnnxExportOptions = {
          hiddenStates: v.hiddenStates,
          fused: v.inputs === 'packed',
          ...(v.rows === 'first' ? { rows: 'first' as const } : {}),
          ...(v.layers !== undefined ? { layers: v.layers } : {}),
          ...(opts.quantize ? { quantize: opts.quantize } : {}),
        };
        const alias = onnxGraphAliasKey(exporter, exportOpts, configText, sha);
        const hit = cachedOnnxGraphByAlias(alias, cache);
        if (hit) return { path: hit.path, ...hit.outputs };
        // not cached: the tfjs model only for as long as the export takes
        const m = await loadModel(modelDir, { weightFiles: weights });
        try {
          const problem = exporter.unsupported(m.model);
          if (problem) throw new UnavailableError(`ONNX Runtime cannot run this '${architecture}' model (${problem})`);
          const g = cachedOnnxGraph(m.model, exporter, exportOpts, cache);
          rememberOnnxGraphAlias(alias, g, cache);
          return { path: g.path, ...g.outputs };
        } finally {
          m.model.dispose();
        }
      },
    };
  }
  const engine = new OnnxFileEngine(source, runtime, { threads: opts.threads, hiddenSize, numLayers, sessionOptions: opts.sessionOptions });
  // a bad own file, or a model the exporter cannot take, fails here, naming it, not at the first batch
  await engine.prepare();
  const model = new OnnxInferenceModel(architecture, hiddenSize, numLayers, maxPositions, engine, parameterCount, source.what);
  return {
    id: idOrPath,
    dir: modelDir,
    source: resolved.source,
    commit: resolved.commit,
    model,
    tokenizer,
    weightsSha256: identity ?? (await weightsSha256(files)),
    weightFiles: files,
    ...(st ? { sentenceEmbedding: st.spec } : {}),
  };
}
