/**
 * Saving a model trained here as a sentence-transformers folder (layout in
 * lib/models/sentence-transformers/write.ts), with one of our pooling strategies expressed in
 * sentence-transformers modules so that `SentenceTransformer(dir).encode(texts)` gives the
 * embeddings our encoder gives (and `loadModel(dir)` reads them back):
 *
 * | ours             | sentence-transformers modules after the Transformer                          |
 * |------------------|------------------------------------------------------------------------------|
 * | `cls`            | Pooling(cls)                                                                 |
 * | `avg`            | Pooling(mean)                                                                |
 * | `last`           | Pooling(lasttoken)                                                           |
 * | `max`            | Pooling(max)                                                                 |
 * | `cls_avg`        | Pooling(cls + mean) then Dense(2D → D, W = [½I ½I], no bias, Identity)       |
 * | `first_last_avg` | WeightedLayerPooling(layer_start 1, weights [1, 0, …, 0, 1]) then Pooling(mean) |
 *
 * Why these are exact:
 * - `cls_avg` has no sentence-transformers mode. Pooling with cls and mean on outputs the
 *   concatenation x = [h₀; m] (Pooling.forward puts cls before mean), and a Dense layer with
 *   W = [½I ½I] (W[i][i] = W[i][D+i] = ½, every other entry 0), no bias and the Identity
 *   activation gives W x = ½h₀ + ½m = (h₀ + m)/2: our cls_avg. Halving is exact in floating point
 *   and the zero entries add exact zeros, so the two agree to rounding of one sum.
 * - `first_last_avg` is the masked mean of (hidden_states[1] + hidden_states[N]) / 2.
 *   WeightedLayerPooling averages hidden_states[layer_start:] with weights, Σ w_l h_l / Σ w_l;
 *   with layer_start 1 and weight 1 on the first and last of layers 1..N (0 elsewhere) that is
 *   (h₁ + h_N)/2, and Pooling(mean) takes its masked mean. It needs the transformer to return
 *   every layer, so config.json gets `output_hidden_states: true`.
 * - `max`: sentence-transformers ignores padding (padded positions become −1e9), AnglE's max
 *   counts them as 0 (lib/embed/pooling.ts). The two agree for every text embedded alone, and in a
 *   batch wherever a dimension has a non-negative value among the text's tokens; the exported
 *   model computes the batch-independent one.
 * - `cls_avg_legacy` and `cls_avg_batch_tokens` depend on the batch a text is embedded with; no
 *   module pipeline computes that, so they are refused.
 *
 * `exportSentenceTransformer` adds what a published model folder has beside the modules: the ONNX
 * graph of the transformer as `onnx/model.onnx` (lib/models/onnx, standard operators only: inputs
 * input_ids, attention_mask, token_type_ids; output last_hidden_state, plus every layer's states
 * when the pooling needs them), the layout transformers.js and sentence-transformers' ONNX backend load,
 * and any other files (a model card, result files), all appearing with the folder in one rename.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { canonicalBertName } from '../models/bert/weights.js';
import { onnxExporterFor, ONNX_ARCHITECTURES, writeOnnxModel } from '../models/onnx/index.js';
import type { LoadedModel } from '../models/types.js';
import { needsAllHiddenStates, sentenceEmbeddingDim, type SentenceEmbeddingSpec, type SentenceEmbeddingStep } from '../models/sentence-transformers/spec.js';
import { writeSentenceTransformerFolder, checkExportTarget } from '../models/sentence-transformers/write.js';
import type { TensorToWrite } from '../models/safetensors.js';
import { InputError } from '../util/errors.js';
import { parsePooling, type Pooling } from './pooling.js';
import { checkTruncation, type EmbeddingTruncation } from './truncation.js';

export interface SaveSentenceTransformerOptions {
  /** Our pooling strategy (or its paper name) to express in modules. */
  pooling: Pooling | string;
  /** max_seq_length (default the model's max positions). */
  maxLength?: number;
  /** Append a Normalize module (unit-length embeddings; cosine scores are unchanged). Default false. */
  normalize?: boolean;
  /** Replace an existing non-empty folder (default: refuse). */
  overwrite?: boolean;
  /**
   * Export a truncated model (./truncation.ts): `layer` keeps the first layers (config.json's
   * num_hidden_layers, their weights, the ONNX graph), as angle_emb's truncate_layer does; `dim`
   * appends Dense(W = [I_dim 0], no bias, Identity) after the pooling, before Normalize, so the folder
   * computes the first `dim` components itself (sentence-transformers does not save a
   * `truncate_dim`; a transformers.js client slices its pooled output to `dim`).
   */
  truncate?: EmbeddingTruncation;
}

/** The modules that compute `pooling` on token states of width `hiddenSize` from a `numLayers`-layer model (see the file comment). */
export function sentenceTransformerSteps(pooling: Pooling | string, hiddenSize: number, numLayers: number): SentenceEmbeddingStep[] {
  const p = parsePooling(pooling);
  const D = hiddenSize;
  const pool = (modes: Array<'cls' | 'mean' | 'max' | 'lasttoken'>): SentenceEmbeddingStep => ({ module: 'Pooling', modes, dim: D, includePrompt: true });
  switch (p) {
    case 'cls':
      return [pool(['cls'])];
    case 'avg':
      return [pool(['mean'])];
    case 'max':
      return [pool(['max'])];
    case 'last':
      return [pool(['lasttoken'])];
    case 'cls_avg': {
      const weight = new Float32Array(D * 2 * D);
      for (let i = 0; i < D; i++) {
        weight[i * 2 * D + i] = 0.5;
        weight[i * 2 * D + D + i] = 0.5;
      }
      return [pool(['cls', 'mean']), { module: 'Dense', inFeatures: 2 * D, outFeatures: D, weight, activation: 'identity' }];
    }
    case 'first_last_avg': {
      const weights = new Float32Array(numLayers);
      weights[0] += 1;
      weights[numLayers - 1] += 1;
      return [{ module: 'WeightedLayerPooling', layerStart: 1, weights }, pool(['mean'])];
    }
    case 'cls_avg_legacy':
    case 'cls_avg_batch_tokens':
      throw new InputError(`pooling '${p}' depends on the batch a text is embedded with, which no sentence-transformers module computes; export with 'cls_avg' (per-text masked mean) instead`);
    case 'cls_pooler':
      throw new InputError("pooling 'cls_pooler' (BERT's pooler output) is not exported here; it would be Pooling(cls) then Dense with the checkpoint's pooler.dense weights and Tanh");
  }
}

/** The pipeline an export writes for `model` with `opts`: its pooling's modules, then Normalize when asked. */
export function sentenceTransformerSpec(model: Pick<LoadedModel['model'], 'hiddenSize' | 'numLayers' | 'maxPositions'>, opts: Pick<SaveSentenceTransformerOptions, 'pooling' | 'maxLength' | 'normalize' | 'truncate'>): SentenceEmbeddingSpec {
  const maxLength = opts.maxLength ?? model.maxPositions;
  if (!Number.isInteger(maxLength) || maxLength < 1 || maxLength > model.maxPositions) throw new InputError(`max length (max_seq_length) must be an integer from 1 to the model's ${model.maxPositions} positions, got ${opts.maxLength}`);
  const layers = checkTruncation({ layer: opts.truncate?.layer }, model.numLayers, model.hiddenSize).layer;
  if (layers === 0) throw new InputError('truncate layer: an export keeps at least one transformer layer (1..' + model.numLayers + ')');
  const steps = sentenceTransformerSteps(opts.pooling, model.hiddenSize, layers);
  const width = sentenceEmbeddingDim({ steps }, model.hiddenSize);
  const dim = checkTruncation({ dim: opts.truncate?.dim }, model.numLayers, width).dim;
  if (dim < width) {
    // The first `dim` components: W[i][i] = 1, every other entry 0 (exact: each output is one input times 1).
    const weight = new Float32Array(dim * width);
    for (let i = 0; i < dim; i++) weight[i * width + i] = 1;
    steps.push({ module: 'Dense', inFeatures: width, outFeatures: dim, weight, activation: 'identity' });
  }
  if (opts.normalize) steps.push({ module: 'Normalize' });
  return { maxSeqLength: maxLength, lowerCase: false, similarity: 'cosine', steps };
}

export interface ExportSentenceTransformerOptions extends SaveSentenceTransformerOptions {
  /** Also write the transformer's ONNX graph as onnx/model.onnx (see the file comment). */
  onnx?: boolean;
  /** More files by path inside the folder ('/'-separated, e.g. README.md, mteb/STS12.json). */
  files?: Readonly<Record<string, string | Uint8Array>>;
}

export interface ExportedSentenceTransformer {
  dir: string;
  spec: SentenceEmbeddingSpec;
  /** Width of the embeddings the folder computes. */
  embeddingDim: number;
  /** Every file written, relative to `dir`, sorted. */
  files: string[];
}

/** A relative path that stays inside the folder. */
function insidePath(p: string): string {
  const parts = p.split('/');
  if (p === '' || p.startsWith('/') || parts.some((x) => x === '' || x === '.' || x === '..')) throw new InputError(`export file '${p}' must be a relative path inside the folder`);
  return p;
}

function listFiles(dir: string, prefix = ''): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const rel = prefix ? `${prefix}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...listFiles(join(dir, e.name), rel));
    else out.push(rel);
  }
  return out.sort();
}

/**
 * Writes `loaded` (its current, possibly trained, weights) as a sentence-transformers folder that
 * encodes with `opts.pooling`, with the ONNX graph and extra files when asked; BERT models only.
 */
export async function exportSentenceTransformer(dir: string, loaded: Pick<LoadedModel, 'model' | 'dir'>, opts: ExportSentenceTransformerOptions): Promise<ExportedSentenceTransformer> {
  const m = loaded.model;
  if (m.architecture !== 'bert') throw new InputError(`only BERT models can be saved as sentence-transformers folders here (this model is '${m.architecture}')`);
  checkExportTarget(dir, opts.overwrite);
  const configFile = join(loaded.dir, 'config.json');
  if (!existsSync(configFile)) throw new InputError('the source model directory has no config.json to export', { file: loaded.dir });
  const spec = sentenceTransformerSpec(m, opts);
  const layers = opts.truncate?.layer ?? m.numLayers;
  const config = { ...(JSON.parse(readFileSync(configFile, 'utf8')) as Record<string, unknown>), ...(layers < m.numLayers ? { num_hidden_layers: layers } : {}) };
  const foreign = [...m.params.keys()].filter((n) => canonicalBertName(n) !== n);
  if (foreign.length) throw new InputError(`the model has parameters BertModel does not (${foreign.slice(0, 3).join(', ')}${foreign.length > 3 ? ', ...' : ''}): merge adapters into the weights first (mergeLora)`);
  const exporter = opts.onnx ? onnxExporterFor(m.architecture) : undefined;
  if (opts.onnx && !exporter) throw new InputError(`no ONNX exporter for '${m.architecture}' models (there is one for ${ONNX_ARCHITECTURES.join(', ')})`);
  const whyNot = exporter?.unsupported(m);
  if (whyNot) throw new InputError(`this model cannot be exported to ONNX: ${whyNot}`);
  const extra = Object.entries(opts.files ?? {}).map(([p, content]) => [insidePath(p), content] as const);
  const weights = new Map<string, TensorToWrite>();
  for (const [name, v] of m.params) if (layerOf(name) < layers) weights.set(name, { shape: v.shape.slice(), data: (await v.data()) as Float32Array });
  const addFiles = (tmp: string) => {
    if (exporter) {
      // Standard ONNX operators only (no ONNX Runtime contrib ops): the file is for any runtime.
      const graph = exporter.export(firstLayers(m, layers), { hiddenStates: needsAllHiddenStates(spec), fused: false });
      mkdirSync(join(tmp, 'onnx'));
      writeOnnxModel(graph.model, join(tmp, 'onnx', 'model.onnx'));
    }
    for (const [p, content] of extra) {
      mkdirSync(dirname(join(tmp, p)), { recursive: true });
      writeFileSync(join(tmp, p), content);
    }
  };
  writeSentenceTransformerFolder(dir, { config, weights, tokenizerDir: loaded.dir, spec, addFiles }, { overwrite: opts.overwrite });
  return { dir, spec, embeddingDim: sentenceEmbeddingDim(spec, m.hiddenSize), files: listFiles(dir) };
}

/** The encoder layer a BERT parameter belongs to (−Infinity for the embeddings and the pooler: always kept). */
function layerOf(name: string): number {
  const m = /^encoder\.layer\.(\d+)\./.exec(name);
  return m ? Number(m[1]) : -Infinity;
}

/**
 * A view of a BERT model with its first `layers` layers only (the same weights, no copy), for the
 * ONNX exporter: config.numLayers and the parameter map are narrowed, everything else is the model's.
 */
function firstLayers(m: LoadedModel['model'], layers: number): LoadedModel['model'] {
  if (layers === m.numLayers) return m;
  const bert = m as unknown as { config: Record<string, unknown> };
  const params = new Map([...m.params].filter(([name]) => layerOf(name) < layers));
  return Object.create(m, { config: { value: { ...bert.config, numLayers: layers } }, params: { value: params }, numLayers: { value: layers } }) as LoadedModel['model'];
}

/**
 * Writes `loaded` (its current, possibly trained, weights) as a sentence-transformers folder that
 * encodes with `pooling`; returns the folder. BERT models only.
 */
export async function saveSentenceTransformer(dir: string, loaded: Pick<LoadedModel, 'model' | 'dir'>, opts: SaveSentenceTransformerOptions): Promise<string> {
  return (await exportSentenceTransformer(dir, loaded, opts)).dir;
}
