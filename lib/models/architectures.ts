/**
 * The architecture registry: one entry per architecture (./architecture.ts says what an entry
 * holds), one line each below. Every dispatch on a config's `model_type` goes through here —
 * loading (./auto.ts), building from a config (./model-from-config.ts), ONNX export, the default
 * pooling, prompt routes' widths, the rehearsal's tokenizers — so a new architecture is its folder
 * plus its line in BUILTIN_ARCHITECTURES (docs/extending.md "An architecture"). `registerArchitecture`
 * adds one at run time (test/helpers/toy-architecture.ts does, as a test of that claim).
 */
import { InputError, UnknownNameError } from '../util/errors.js';
import type { Architecture } from './architecture.js';
import { BERT_ARCHITECTURE } from './bert/architecture.js';
import { LLAMA_ARCHITECTURE } from './llama/architecture.js';
import type { OnnxExporter } from './onnx/exporter.js';
import { OPT_ARCHITECTURE } from './opt/architecture.js';
import type { Pooling } from './pooling.js';
import { RAN_ARCHITECTURE } from './ran/architecture.js';

const BUILTIN_ARCHITECTURES: readonly Architecture[] = [BERT_ARCHITECTURE, LLAMA_ARCHITECTURE, OPT_ARCHITECTURE, RAN_ARCHITECTURE];

const registered: Architecture[] = [...BUILTIN_ARCHITECTURES];

/** The config.json `model_type`s the library's own architectures answer to. */
export const MODEL_TYPES: readonly string[] = BUILTIN_ARCHITECTURES.flatMap((a) => a.modelTypes);

/** Every registered architecture, the library's own first. */
export function architectures(): readonly Architecture[] {
  return registered;
}

/** Adds an architecture; refuses a name or model_type already taken. Returns the entry. */
export function registerArchitecture(entry: Architecture): Architecture {
  const taken = registered.find((a) => a.name === entry.name || a.modelTypes.some((t) => entry.modelTypes.includes(t)));
  if (taken) throw new InputError(`architecture '${entry.name}' (model_type ${entry.modelTypes.join(', ')}): '${taken.name}' is registered with that name or model_type already`);
  registered.push(entry);
  return entry;
}

/** The entry answering to `modelType` (a config's model_type or a model's architecture), or undefined. */
export function findArchitecture(modelType: string): Architecture | undefined {
  return registered.find((a) => a.name === modelType || a.modelTypes.includes(modelType));
}

/** The entry of a config.json object: its model_type's, or for a config without one, the entry that claims it; UnknownNameError otherwise. */
export function architectureOfConfig(config: Readonly<Record<string, unknown>>, file = 'config'): Architecture {
  const type = typeof config.model_type === 'string' ? config.model_type : undefined;
  const arch = type !== undefined ? findArchitecture(type) : registered.find((a) => a.claimsConfig?.(config));
  if (!arch) throw new UnknownNameError('model architecture (config.json model_type)', type ?? '(none)', registered.flatMap((a) => a.modelTypes), { file });
  return arch;
}

/** The entry of a model's architecture (TextModel.architecture); UnknownNameError for one not registered. */
export function architectureNamed(name: string): Architecture {
  const arch = findArchitecture(name);
  if (!arch) throw new UnknownNameError('model architecture', name, registered.map((a) => a.name));
  return arch;
}

/** The ONNX exporter of a model architecture (TextModel.architecture), or undefined when it has none. */
export function onnxExporterFor(architecture: string): OnnxExporter | undefined {
  return findArchitecture(architecture)?.onnx;
}

/** The library's own architectures that have an ONNX exporter (for messages). */
export const ONNX_ARCHITECTURES: readonly string[] = BUILTIN_ARCHITECTURES.flatMap((a) => (a.onnx ? [a.onnx.architecture] : []));

/** The pooling of an architecture's sentence vectors where nothing else names one (its entry's `defaultPooling`). */
export function defaultPoolingOf(architecture: string): Pooling {
  return architectureNamed(architecture).defaultPooling;
}

/** The names of the architectures that store a frozen base while loading (for errors). */
export function frozenBaseArchitectures(): string[] {
  return registered.filter((a) => a.frozenBase).map((a) => a.name);
}

/** The width of a config's sentence vectors (its entry's `embeddingWidth`). */
export function embeddingWidthOfConfig(config: Readonly<Record<string, unknown>>): number {
  return architectureOfConfig(config).embeddingWidth(config);
}
