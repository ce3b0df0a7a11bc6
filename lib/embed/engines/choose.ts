/**
 * Which inference engine an encoder uses. The switch: the `engine` option, else ANGLE_INFERENCE,
 * else `auto`.
 *
 * | choice | engine                                                                          |
 * |--------|---------------------------------------------------------------------------------|
 * | `auto` | ONNX Runtime where the tfjs backend computes on the CPU (`cpu`, `wasm`), the model's architecture has an ONNX exporter and onnxruntime-node loads; the tfjs forward otherwise (device backends such as `cuda` keep their own) |
 * | `onnx` | ONNX Runtime, or an UnavailableError saying why not (a forced engine never silently becomes another) |
 * | `tfjs` | the model's tfjs forward on the active backend (the parity reference)            |
 *
 * A model loaded for ONNX Runtime only (loadOnnxInferenceModel) brings its own engine, which
 * `auto` and `onnx` return; `tfjs` is an error for it.
 *
 * Under `auto`, a fallback says why in one line, once per process: an architecture without an
 * exporter, or onnxruntime-node missing or failing to load. Encoders of the same model share one
 * ONNX engine (one exported graph and session), held as long as the model object lives.
 */
import { tf } from '../../backend/index.js';
import { onnxExporterFor, ONNX_ARCHITECTURES } from '../../models/auto.js';
import type { TextModel } from '../../models/types.js';
import { UnavailableError, UnknownNameError } from '../../util/errors.js';
import { OnnxEngine, type OnnxEngineOptions } from './onnx-engine.js';
import { ownInferenceEngine } from './onnx-inference-model.js';
import { loadOnnxRuntime, ONNX_RUNTIME_MODULE } from './onnx-runtime.js';
import { TfjsEngine, type TfjsEngineOptions } from './tfjs-engine.js';
import type { InferenceEngine } from './types.js';

export const INFERENCE_ENGINE_CHOICES = ['auto', 'onnx', 'tfjs'] as const;
export type InferenceEngineChoice = (typeof INFERENCE_ENGINE_CHOICES)[number];

/** tfjs backends that compute on the host CPU, where ONNX Runtime's CPU provider is the faster engine. */
const CPU_BACKENDS: readonly string[] = ['cpu', 'wasm'];

export interface ChooseEngineOptions {
  /** `auto`, `onnx` or `tfjs` (default ANGLE_INFERENCE, else auto). */
  engine?: InferenceEngineChoice | string;
  onnx?: OnnxEngineOptions;
  tfjs?: TfjsEngineOptions;
  /** Where engine notices go (default stderr; stdout under tslab, see `infoLine`). */
  log?: (line: string) => void;
  /** The module to load as ONNX Runtime (default onnxruntime-node; tests name a missing one). */
  onnxRuntimeModule?: string;
}

/** The engine choice: `choice`, else ANGLE_INFERENCE, else auto. */
export function parseEngineChoice(choice: string | undefined, env: NodeJS.ProcessEnv = process.env): InferenceEngineChoice {
  const fromEnv = env.ANGLE_INFERENCE?.trim() ? env.ANGLE_INFERENCE.trim() : undefined;
  const given = (choice ?? fromEnv ?? 'auto').trim().toLowerCase();
  if ((INFERENCE_ENGINE_CHOICES as readonly string[]).includes(given)) return given as InferenceEngineChoice;
  throw new UnknownNameError(choice !== undefined ? 'inference engine' : 'inference engine (ANGLE_INFERENCE)', choice ?? fromEnv ?? '', INFERENCE_ENGINE_CHOICES);
}

const noticed = new Set<string>();
/**
 * Where the engine's one info line goes by default: stderr on the command line (beside progress
 * bars, out of a command's output), stdout in a notebook — under tslab or Deno's kernel (in Jupyter
 * or the headless runner) stderr shows as a red error box, and this line is not an error.
 */
function infoLine(line: string): void {
  const g = globalThis as { __tslab__?: unknown; Deno?: { jupyter?: unknown } };
  // tslab's kernel sets __tslab__; Deno's Jupyter kernel has Deno.jupyter (lib/notebook/tslab.ts).
  if (g.__tslab__ !== undefined || g.Deno?.jupyter !== undefined) console.log(line);
  else console.error(line);
}

function once(log: (line: string) => void, line: string): void {
  if (noticed.has(line)) return;
  noticed.add(line);
  log(line);
}

const shared = new WeakMap<TextModel, Map<string, OnnxEngine>>();

/** The inference engine for `model` under the switch (see the table above). */
export async function chooseInferenceEngine(model: TextModel, opts: ChooseEngineOptions = {}): Promise<InferenceEngine> {
  const choice = parseEngineChoice(opts.engine);
  const log = opts.log ?? infoLine;
  // a model loaded for ONNX Runtime only (./onnx-inference-model.ts) has no tfjs forward to fall back to
  const own = ownInferenceEngine(model);
  if (own) {
    if (choice === 'tfjs') throw new UnavailableError(`inference engine 'tfjs' is unavailable: this model was loaded for ONNX Runtime inference only (no tfjs weights); load it with loadModel for the tfjs forward`);
    return own;
  }
  const tfjs = () => new TfjsEngine(model, opts.tfjs);
  if (choice === 'tfjs') return tfjs();
  const backend = tf.getBackend();
  if (choice === 'auto' && !CPU_BACKENDS.includes(backend)) return tfjs();

  const exporter = onnxExporterFor(model.architecture);
  const problem = exporter?.unsupported(model);
  if (!exporter || problem) {
    const why = exporter
      ? `ONNX Runtime cannot run this '${model.architecture}' model (${problem})`
      : `ONNX Runtime cannot run architecture '${model.architecture}' (no ONNX exporter; exporters exist for: ${ONNX_ARCHITECTURES.join(', ')})`;
    if (choice === 'onnx') throw new UnavailableError(why);
    once(log, `inference: ${why}; using tfjs ${backend}`);
    return tfjs();
  }
  const runtime = await loadOnnxRuntime(opts.onnxRuntimeModule ?? ONNX_RUNTIME_MODULE);
  if ('error' in runtime) {
    if (choice === 'onnx') throw new UnavailableError(`inference engine 'onnx' is unavailable: ${runtime.error}`);
    once(log, `inference: ${runtime.error}; using tfjs ${backend}`);
    return tfjs();
  }
  const key = JSON.stringify({ cache: opts.onnx?.cache ?? {}, threads: opts.onnx?.threads ?? null, graph: opts.onnx?.graph ?? 'fused', module: opts.onnxRuntimeModule ?? null });
  let engines = shared.get(model);
  if (!engines) {
    engines = new Map();
    shared.set(model, engines);
  }
  let engine = engines.get(key);
  if (!engine) {
    engine = new OnnxEngine(model, exporter, runtime, opts.onnx, log);
    engines.set(key, engine);
    once(log, `inference: ${engine.description}`);
  }
  return engine;
}
