/**
 * Writing a sentence-transformers model folder that both `SentenceTransformer(dir)` and HF
 * `AutoModel.from_pretrained(dir)` load, laid out as SentenceTransformer.save does:
 *
 *   modules.json                       [{idx, name, path, type}]: Transformer at path "" (it is
 *                                      saved in the folder itself), then `<idx>_<Module>` folders
 *   config_sentence_transformers.json  {model_type: SentenceTransformer, prompts: {},
 *                                      default_prompt_name: null, similarity_fn_name}
 *   config.json, model.safetensors     the HF model (BertModel tensor names, metadata format=pt);
 *                                      config.json gets output_hidden_states=true when a
 *                                      WeightedLayerPooling step needs every layer
 *   tokenizer.json, vocab.txt          copied (vocab.txt when present)
 *   tokenizer_config.json, special_tokens_map.json   the source's, completed (./tokenizer-files.ts:
 *                                      tokenizer_class, special tokens, model_max_length =
 *                                      max_seq_length), so every client can pad a batch
 *   sentence_bert_config.json          {max_seq_length, do_lower_case}
 *   <i>_WeightedLayerPooling/          config.json + model.safetensors (layer_weights)
 *   <i>_Pooling/config.json            every pooling_mode_* flag and include_prompt
 *   <i>_Dense/                         config.json + model.safetensors (linear.weight [out, in], linear.bias)
 *   <i>_Normalize/                     empty, as sentence-transformers leaves it
 *
 * JSON is indented as sentence-transformers writes it (4 spaces for module configs and
 * sentence_bert_config.json, 2 for modules.json and config_sentence_transformers.json). The folder
 * appears whole or not at all: it is filled in a temporary sibling and renamed into place; an
 * existing non-empty target is refused unless `overwrite` is set. `addFiles` puts more files into
 * the temporary folder before the rename (an ONNX graph, a model card, result files), so they
 * appear together with the rest.
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeDirectoryAtomicSync } from '../../util/atomic-write.js';
import { InputError } from '../../util/errors.js';
import { serializeSafetensors, type TensorToWrite } from '../safetensors.js';
import { MODULES_JSON, ST_CONFIG_JSON, SENTENCE_BERT_CONFIGS } from './read.js';
import { completeTokenizerFiles } from './tokenizer-files.js';
import { ST_ACTIVATIONS, ST_MODULE_TYPES, ST_POOLING_MODES, ST_POOLING_CONFIG_KEYS, needsAllHiddenStates, type SentenceEmbeddingSpec, type SentenceEmbeddingStep } from './spec.js';

/** Tokenizer files an HF model directory may have: the first and last are copied, the middle two completed (see the file comment). */
export const TOKENIZER_FILES = ['tokenizer.json', 'tokenizer_config.json', 'special_tokens_map.json', 'vocab.txt'];
const COPIED_TOKENIZER_FILES = ['tokenizer.json', 'vocab.txt'];

export interface SentenceTransformerContents {
  /** The HF config.json object of the transformer (model_type, sizes, ...). */
  config: Record<string, unknown>;
  /** The transformer's tensors under their HF (BertModel) names. */
  weights: ReadonlyMap<string, TensorToWrite>;
  /** Directory the tokenizer files are copied from. */
  tokenizerDir: string;
  spec: SentenceEmbeddingSpec;
  /** Writes more files into the (temporary) folder before it is renamed into place. */
  addFiles?: (dir: string) => void;
}

export interface WriteFolderOptions {
  /** Replace an existing non-empty folder (default: refuse). */
  overwrite?: boolean;
}

const json = (v: unknown, indent: number) => JSON.stringify(v, null, indent) + '\n';
const PT = { format: 'pt' };

/** Refuses a target that is a file, or a non-empty folder without `overwrite`. */
export function checkExportTarget(dir: string, overwrite = false): void {
  if (!existsSync(dir)) return;
  if (!statSync(dir).isDirectory()) throw new InputError('export target exists and is not a directory', { file: dir });
  if (!overwrite && readdirSync(dir).length > 0) throw new InputError('export target is a non-empty directory; pass overwrite: true to replace it', { file: dir });
}

function stepFolder(idx: number, s: SentenceEmbeddingStep): string {
  return `${idx}_${s.module}`;
}

function writeStep(dir: string, s: SentenceEmbeddingStep, numLayers: number, hidden: number): void {
  mkdirSync(dir);
  switch (s.module) {
    case 'WeightedLayerPooling':
      writeFileSync(join(dir, 'config.json'), json({ word_embedding_dimension: hidden, layer_start: s.layerStart, num_hidden_layers: numLayers }, 4));
      writeFileSync(join(dir, 'model.safetensors'), serializeSafetensors({ layer_weights: { shape: [s.weights.length], data: s.weights } }, PT));
      return;
    case 'Pooling': {
      const flags = Object.fromEntries(ST_POOLING_MODES.map((m) => [m.key, s.modes.includes(m.mode)]));
      const all: Record<string, unknown> = { word_embedding_dimension: s.dim, ...flags, include_prompt: s.includePrompt };
      writeFileSync(join(dir, 'config.json'), json(Object.fromEntries(ST_POOLING_CONFIG_KEYS.map((k) => [k, all[k]])), 4));
      return;
    }
    case 'Dense': {
      const act = Object.entries(ST_ACTIVATIONS).find(([, v]) => v === s.activation)![0];
      writeFileSync(join(dir, 'config.json'), json({ in_features: s.inFeatures, out_features: s.outFeatures, bias: s.bias !== undefined, activation_function: act }, 4));
      const t: Record<string, TensorToWrite> = { 'linear.weight': { shape: [s.outFeatures, s.inFeatures], data: s.weight } };
      if (s.bias) t['linear.bias'] = { shape: [s.outFeatures], data: s.bias };
      writeFileSync(join(dir, 'model.safetensors'), serializeSafetensors(t, PT));
      return;
    }
    case 'Normalize':
      return; // Normalize.save writes nothing; the folder exists as sentence-transformers leaves it.
  }
}

/** Writes the folder (see the file comment) and returns its path. */
export function writeSentenceTransformerFolder(dir: string, c: SentenceTransformerContents, opts: WriteFolderOptions = {}): string {
  checkExportTarget(dir, opts.overwrite);
  const hidden = c.config.hidden_size;
  const numLayers = c.config.num_hidden_layers;
  if (typeof hidden !== 'number' || typeof numLayers !== 'number') throw new InputError('config has no numeric hidden_size / num_hidden_layers');
  // Before anything is written: a tokenizer whose special tokens cannot be found fails here.
  const tokenizer = completeTokenizerFiles(c.tokenizerDir, c.config, c.spec.maxSeqLength);
  writeDirectoryAtomicSync(dir, (tmp) => {
    const config: Record<string, unknown> = { ...c.config, architectures: ['BertModel'] };
    if (needsAllHiddenStates(c.spec)) config.output_hidden_states = true;
    writeFileSync(join(tmp, 'config.json'), json(config, 2));
    const tensors: Record<string, TensorToWrite> = {};
    for (const [name, t] of c.weights) tensors[name] = t;
    writeFileSync(join(tmp, 'model.safetensors'), serializeSafetensors(tensors, PT));
    for (const f of COPIED_TOKENIZER_FILES) if (existsSync(join(c.tokenizerDir, f))) copyFileSync(join(c.tokenizerDir, f), join(tmp, f));
    writeFileSync(join(tmp, 'tokenizer_config.json'), json(tokenizer.tokenizerConfig, 2));
    writeFileSync(join(tmp, 'special_tokens_map.json'), json(tokenizer.specialTokensMap, 2));
    writeSentenceTransformerModules(tmp, c.spec, numLayers, hidden);
    c.addFiles?.(tmp);
  });
  return dir;
}

/**
 * The sentence-transformers files of a folder whose transformer (config.json, weights, tokenizer)
 * is the folder itself: sentence_bert_config.json, config_sentence_transformers.json, one
 * `<i>_<Module>` folder per step and modules.json. The export writes them with the rest of its
 * folder; a run's best/ checkpoint (lib/train/best-model.ts) writes them beside its weights, so the
 * model loads back with the pooling it was trained with.
 */
export function writeSentenceTransformerModules(dir: string, spec: SentenceEmbeddingSpec, numLayers: number, hidden: number): void {
  writeFileSync(join(dir, SENTENCE_BERT_CONFIGS[0]), json({ max_seq_length: spec.maxSeqLength, do_lower_case: spec.lowerCase }, 4));
  const prompts = spec.prompt !== undefined ? { default: spec.prompt } : {};
  writeFileSync(
    join(dir, ST_CONFIG_JSON),
    json({ model_type: 'SentenceTransformer', prompts, default_prompt_name: spec.prompt !== undefined ? 'default' : null, similarity_fn_name: spec.similarity ?? 'cosine' }, 2),
  );
  const modules: Array<{ idx: number; name: string; path: string; type: string }> = [{ idx: 0, name: '0', path: '', type: ST_MODULE_TYPES.Transformer }];
  spec.steps.forEach((s, i) => {
    const idx = i + 1;
    const path = stepFolder(idx, s);
    writeStep(join(dir, path), s, numLayers, hidden);
    modules.push({ idx, name: String(idx), path, type: ST_MODULE_TYPES[s.module] });
  });
  writeFileSync(join(dir, MODULES_JSON), json(modules, 2));
}
