/**
 * The pooling module of a loaded model — what turns its token states into a sentence vector when
 * the caller names no pooling — decided in one place:
 *
 * 1. A sentence-transformers folder (modules.json + 1_Pooling/config.json, ...) carries its own:
 *    the modules it was saved with (lib/models/sentence-transformers/read.ts). When those modules
 *    are what one of our poolings exports to (./sentence-transformer-export.ts: `cls_avg` is
 *    Pooling(cls + mean) then Dense [½I ½I], ...), the module is that pooling; otherwise the
 *    folder's pipeline is applied as it is ('sentence-transformers').
 * 2. Any other model: its architecture's default, stated in its registry entry
 *    (lib/models/architecture.ts `defaultPooling`: BERT cls, the decoders last, RanNet cls_pooler).
 *
 * So a model trained here and saved with its pooling (`saveSentenceTransformer`,
 * `npm run export`) loads back with it, and the encoders (./encoder.ts), the trainer and the
 * evaluation's model entries read this module instead of a default of their own.
 */
import { defaultPoolingOf } from '../models/architectures.js';
import type { SentenceEmbeddingSpec, SentenceEmbeddingStep } from '../models/sentence-transformers/spec.js';
import type { LoadedModel, TextModel } from '../models/types.js';
import type { Pooling } from './pooling.js';
import { sentenceTransformerSpec, sentenceTransformerSteps } from './sentence-transformer-export.js';

/** The poolings a sentence-transformers folder can carry (./sentence-transformer-export.ts: the others depend on the batch or need the checkpoint's pooler). */
const FOLDER_POOLINGS: readonly Pooling[] = ['cls', 'avg', 'max', 'last', 'cls_avg', 'first_last_avg'];

export interface PoolingModule {
  /** Our pooling, when the module is one; undefined for a folder pipeline that is none of ours. */
  pooling?: Pooling;
  /** What an encoder applies: our pooling, or the folder's own pipeline. */
  applies: Pooling | 'sentence-transformers';
  /** Where it was read: the model folder's modules, or the architecture's registry entry. */
  from: 'sentence-transformers folder' | 'architecture default';
}

function sameStep(a: SentenceEmbeddingStep, b: SentenceEmbeddingStep): boolean {
  if (a.module !== b.module) return false;
  if (a.module === 'Pooling' && b.module === 'Pooling') return a.dim === b.dim && a.includePrompt === b.includePrompt && a.modes.join() === b.modes.join();
  if (a.module === 'Dense' && b.module === 'Dense') {
    return a.inFeatures === b.inFeatures && a.outFeatures === b.outFeatures && a.activation === b.activation && !a.bias && !b.bias && a.weight.every((w, i) => w === b.weight[i]);
  }
  if (a.module === 'WeightedLayerPooling' && b.module === 'WeightedLayerPooling') return a.layerStart === b.layerStart && a.weights.length === b.weights.length && a.weights.every((w, i) => w === b.weights[i]);
  return a.module === 'Normalize';
}

/**
 * Which of our poolings a folder's steps compute on a `numLayers`-layer model of width
 * `hiddenSize` (a trailing Normalize aside: cosine scores do not see it), or undefined.
 */
export function poolingOfSteps(spec: Pick<SentenceEmbeddingSpec, 'steps'>, hiddenSize: number, numLayers: number): Pooling | undefined {
  const steps = spec.steps.at(-1)?.module === 'Normalize' ? spec.steps.slice(0, -1) : spec.steps;
  return FOLDER_POOLINGS.find((p) => {
    const want = sentenceTransformerSteps(p, hiddenSize, numLayers);
    return want.length === steps.length && want.every((s, i) => sameStep(s, steps[i]));
  });
}

/** The pooling module of a loaded model (see the file comment). */
export function poolingModuleOf(m: Pick<LoadedModel, 'model' | 'sentenceEmbedding'>): PoolingModule {
  if (m.sentenceEmbedding) {
    const pooling = poolingOfSteps(m.sentenceEmbedding, m.model.hiddenSize, m.model.numLayers);
    return { ...(pooling ? { pooling } : {}), applies: 'sentence-transformers', from: 'sentence-transformers folder' };
  }
  const pooling = defaultPoolingOf(m.model.architecture);
  return { pooling, applies: pooling, from: 'architecture default' };
}

/**
 * The sentence-transformers pipeline that saves `pooling` as the module of a model shaped like
 * `model` (max_seq_length its positions, as an encoder's default), or undefined for a pooling no
 * module pipeline computes (cls_pooler, the batch-dependent ones). A run's best/ checkpoint is
 * saved with it (lib/train/best-model.ts), so `poolingModuleOf` reads the trained pooling back.
 */
export function poolingModuleSpec(pooling: Pooling, model: Pick<TextModel, 'hiddenSize' | 'numLayers' | 'maxPositions'>): SentenceEmbeddingSpec | undefined {
  return FOLDER_POOLINGS.includes(pooling) ? sentenceTransformerSpec(model, { pooling }) : undefined;
}
