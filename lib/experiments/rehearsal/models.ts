/**
 * The models a rehearsal runs: the papers' architectures at their real sizes with random weights
 * (no pretrained weights are on this project's machines, and a rehearsal measures shapes, not
 * quality). A model the machine can load (a local folder, the Hub cache) is loaded as it is;
 * otherwise one of the configs the papers name (lib/models/model-from-config.ts `KNOWN_CONFIGS`:
 * bert-base-uncased, LLaMA-2 7B and 13B, OPT 125M–66B; AnglE-RAN's RAN_base from its assumed config,
 * lib/models/ran/ran-base.ts) is instantiated with HF's initialisation —
 * for real when its training state fits this machine comfortably, else on the shape-only backend
 * (lib/backend/shape-only), which holds no values at all.
 *
 * Tokenizers: each architecture's registry entry names the one that counts its tokens here
 * (lib/models/architecture.ts `rehearsalTokenizer`, over the shared folder's models/): BERT's and
 * RanNet's from bert-base-uncased's WordPiece; for LLaMA-2, whose SentencePiece tokenizer is not on
 * this machine, GPT-2's byte-level BPE (models/gpt2-tokenizer, left padding) — a 50k vocabulary
 * against LLaMA-2's 32k, so its counts are close, not equal; texts are cut at the recipe's max
 * length either way. Its ids are folded into the decoder's vocabulary (id mod vocab_size): the
 * counts and shapes stay GPT-2's, and the embedding lookup stays in range. OPT tokenizes with
 * GPT-2's BPE itself (plus its `</s>` BOS), so its counts are exact. Parameter counts and the
 * random models come from the entry too (lib/models/model-from-config.ts).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { locateSharedDir } from '../../config.js';
import { loadModel } from '../../models/auto.js';
import type { FrozenBaseSpec } from '../../models/frozen-base.js';
import { architectureOfConfig } from '../../models/architectures.js';
import type { RehearsalTokenizer } from '../../models/architecture.js';
import { KNOWN_CONFIGS, modelFromConfig, parameterCountOfConfig, type KnownModel } from '../../models/model-from-config.js';
import { RAN_BASE_ASSUMED_CONFIG, RAN_BASE_ID } from '../../models/ran/ran-base.js';
import type { LoadedModel, TextModel, TextTokenizer } from '../../models/types.js';
import { InputError, UnavailableError } from '../../util/errors.js';

/** Bytes of training state per parameter in fp32 (weights, gradients, AdamW's two moments). */
const TRAINING_BYTES_PER_PARAMETER = 16;
/** Above this much training state a model rehearses shape-only here (this machine has 24 GiB, shared). */
const REAL_LIMIT_BYTES = 6 * 2 ** 30;

export interface RehearsalModelSpec {
  id: string;
  /** The config.json to build from (absent: the model was loadable, `loaded` is set). */
  config?: Readonly<Record<string, unknown>>;
  loaded?: LoadedModel;
  tokenizer: TextTokenizer;
  parameters: number;
  /** Whether its training step can run for real here, or shape-only. */
  shapeOnly: boolean;
  /** How it was instantiated, for the rehearsal table. */
  instantiated: string;
}

function sharedModelDir(name: string): string | undefined {
  const shared = locateSharedDir();
  const dir = shared ? join(shared.path, 'models', name) : undefined;
  return dir && existsSync(dir) ? dir : undefined;
}

/** The tokenizer a config's rehearsal counts tokens with (its architecture's entry; see the file comment). */
export function rehearsalTokenizer(config: Readonly<Record<string, unknown>>): RehearsalTokenizer {
  return architectureOfConfig(config).rehearsalTokenizer(config, sharedModelDir);
}

/**
 * What a rehearsal runs for `id`: the model as loaded when it can be, else a known config with
 * random weights; throws UnavailableError for an id that is neither.
 */
export async function rehearsalModel(id: string): Promise<RehearsalModelSpec> {
  try {
    const loaded = await loadModel(id);
    const parameters = loaded.model.numParameters();
    return { id, loaded, tokenizer: loaded.tokenizer, parameters, shapeOnly: false, instantiated: `loaded (${loaded.source})` };
  } catch (e) {
    if (!(e instanceof InputError) && !(e instanceof UnavailableError)) throw e;
    // RAN_base's config.json was not reachable: its assumed one (lib/models/ran/ran-base.ts).
    const config = id === RAN_BASE_ID ? RAN_BASE_ASSUMED_CONFIG : (KNOWN_CONFIGS as Record<string, Readonly<Record<string, unknown>>>)[id as KnownModel];
    if (!config) throw new UnavailableError(`${id} cannot be loaded here (${(e as Error).message.split('\n')[0]}) and is not a config the rehearsal knows (${Object.keys(KNOWN_CONFIGS).join(', ')})`);
    const parameters = parameterCountOfConfig(config);
    const shapeOnly = parameters * TRAINING_BYTES_PER_PARAMETER > REAL_LIMIT_BYTES;
    const { tokenizer, note } = rehearsalTokenizer(config);
    const assumed = id === RAN_BASE_ID ? ' (ASSUMED shapes: D 768, 7 layers, 12 x 64 heads, window 256 / 16; only the 86M parameters are the paper\'s)' : '';
    return { id, config, tokenizer, parameters, shapeOnly, instantiated: `${shapeOnly ? 'shape-only' : 'random'} ${config.model_type} config${assumed}, ${note}` };
  }
}

/**
 * A fresh model of the spec on the active backend (built from its config, or the loaded one's
 * weights reloaded); `frozenBase` stores a LoRA run's base in 16 or 4 bits as it loads, as a real
 * run does (lib/models/frozen-base.ts), so the float32 model is never held.
 */
export async function instantiate(spec: RehearsalModelSpec, seed = 0, frozenBase?: FrozenBaseSpec): Promise<TextModel> {
  if (spec.config) return modelFromConfig(spec.config, { init: 'normal', seed, frozenBase });
  return (await loadModel(spec.id, { frozenBase })).model;
}

/**
 * Under the rehearsal preset, what `loadModel(id)` stands in with: the model itself where it can be
 * loaded, else its config at its real size with random weights when that fits this machine (a
 * BERT-base encodes here as it would on the GPU, only slower); a model that fits only shape-only
 * (a 7B decoder) is unavailable for real work, and its evaluations are rehearsed (./encode.ts).
 */
export async function rehearsalLoadedModel(id: string): Promise<LoadedModel> {
  const spec = await rehearsalModel(id);
  if (spec.loaded) return spec.loaded;
  if (spec.shapeOnly) throw new UnavailableError(`rehearsal: ${id} (${(spec.parameters / 1e9).toFixed(1)}B parameters) is too big to instantiate on this machine; its work is rehearsed shape-only`);
  const model = await instantiate(spec);
  return { id, dir: '', source: 'local', model, tokenizer: spec.tokenizer, weightsSha256: `random-init:${id}:seed0`, weightFiles: [] };
}
