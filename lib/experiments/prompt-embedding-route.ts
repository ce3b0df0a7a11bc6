/**
 * Where a decoder's prompt embeddings are computed (PromptEOL's rows without training): in this
 * process, through a serving engine's OpenAI-compatible `POST /v1/embeddings`
 * (docs/serving-engines.md), or nowhere — and then the row says why and which command starts an
 * engine.
 *
 * The rule, per model:
 * 1. a model the parameter cell sends to the endpoint (`endpointModels`) goes there;
 * 2. a model whose float32 weights do not fit one 80 GB GPU goes there: our in-process forward runs
 *    in float32, so its weights take parameters × 4 bytes, against the 72 GB budget every fit
 *    decision of this project uses (./rehearsal/projection.ts FIT_BUDGET_BYTES: 80 GB less the
 *    CUDA context and the allocator's slack); an inference batch of prompts adds little beside
 *    weights this large (docs/decoder-memory.md measures LLaMA-2-7B's at 6.7 GB over its 27 GB of
 *    weights for 64 prompts × 128 tokens), and the rehearsal measures each in-process row's peak;
 * 3. every other model runs in process.
 * A model routed to the endpoint with no endpoint named is skipped, saying what to start (vLLM in
 * 16 bits, tensor-parallel over the fewest GPUs whose 72 GB hold its 16-bit weights, or
 * `npm run serve-llm`). A model that is not a config this project knows (KNOWN_CONFIGS) is
 * counted from nothing and runs in process unless sent to the endpoint.
 *
 * The smoke preset has no OPT weights: the golden tiny OPT (`<shared>/golden/opt-tiny-seed7`)
 * stands in, once (for the first OPT size that would run in process), and is marked so; the other
 * in-process OPT sizes say so instead of repeating it.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { locateSharedDir } from '../config.js';
import { KNOWN_CONFIGS, parameterCountOfConfig } from '../models/model-from-config.js';
import { InputError } from '../util/errors.js';
import { FIT_BUDGET_BYTES } from './rehearsal/projection.js';

/** Where one model's prompt embeddings are computed. */
export type PromptEmbeddingRoute =
  /** Loaded here (float32). `standInFor`: the model it stands in for (smoke), so records and tables say so. */
  | { kind: 'in-process'; model: string; standInFor?: string; why: string }
  /** Sent to an OpenAI-compatible embeddings endpoint serving `model` under that name. */
  | { kind: 'endpoint'; baseURL: string; model: string; why: string }
  /** Not embedded here; `why` says why, and for the endpoint what starts one; `short`: the same in a few words, for a table cell. */
  | { kind: 'skipped'; why: string; short: string };

/** Endpoints as the parameter cell names them: one base URL for every routed model, or one per model id. */
export type EndpointSetting = string | Readonly<Record<string, string>> | undefined;

/** The float32 weights of a known config, and whether they fit one 80 GB GPU (see the file comment). */
export function inProcessFit(model: string): { parameters: number; bytes: number; fits: boolean } | undefined {
  const config = (KNOWN_CONFIGS as Record<string, Readonly<Record<string, unknown>>>)[model];
  if (!config) return undefined;
  const parameters = parameterCountOfConfig(config);
  const bytes = parameters * 4;
  return { parameters, bytes, fits: bytes <= FIT_BUDGET_BYTES };
}

/**
 * GPUs of 80 GB a serving engine needs for `model` in 16 bits: the fewest, a power of two that
 * divides the attention-head count (tensor parallelism splits the heads), whose FIT_BUDGET_BYTES
 * each hold the 16-bit weights. Unknown models: 1.
 */
export function tensorParallelSize(model: string): number {
  const config = (KNOWN_CONFIGS as Record<string, Readonly<Record<string, unknown>>>)[model];
  if (!config) return 1;
  const bytes16 = parameterCountOfConfig(config) * 2;
  const heads = Number(config.num_attention_heads);
  for (let n = 1; n <= 64; n *= 2) if (heads % n === 0 && bytes16 / n <= FIT_BUDGET_BYTES) return n;
  return 64;
}

/** The vLLM command that serves `model`'s last-token embeddings, unnormalised (docs/serving-engines.md). */
export function vllmEmbeddingCommand(model: string): string {
  return [
    `vllm serve ${model}`,
    '--runner pooling --convert embed',
    `--pooler-config '{"pooling_type": "LAST", "use_activation": false}'`,
    `--tensor-parallel-size ${tensorParallelSize(model)}`,
    '--dtype float16 --max-model-len 512',
    `--served-model-name ${model} --port 8000`,
  ].join(' ');
}

/** The command of this project's own server over `model` (float32, one process). */
export function serveLlmCommand(model: string): string {
  return `npm run serve-llm -- --model ${model} --served-model-name ${model} --port 8000 --host 0.0.0.0`;
}

/** The endpoint named for `model`, if any. */
export function endpointFor(model: string, endpoints: EndpointSetting): string | undefined {
  if (endpoints === undefined) return undefined;
  if (typeof endpoints === 'string') return endpoints.trim() === '' ? undefined : endpoints.trim();
  const v = endpoints[model];
  return v !== undefined && v.trim() !== '' ? v.trim() : undefined;
}

/** The golden tiny OPT the smoke preset stands in with, when the shared folder has it. */
export function smokeOptStandIn(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const shared = locateSharedDir(undefined, env);
  const dir = shared ? join(shared.path, 'golden', 'opt-tiny-seed7', 'model') : undefined;
  return dir && existsSync(join(dir, 'config.json')) ? dir : undefined;
}

function gb(bytes: number): string {
  return `${(bytes / 1e9).toFixed(1)} GB`;
}

export interface RouteOptions {
  /** The parameter cell's endpoint(s). */
  endpoints?: EndpointSetting;
  /** Models sent to the endpoint although one GPU holds them (e.g. the LLaMA row, to compare engines). */
  endpointModels?: readonly string[];
}

/** Where `model`'s prompt embeddings are computed (see the file comment), without stand-ins. */
export function promptEmbeddingRoute(model: string, o: RouteOptions = {}): PromptEmbeddingRoute {
  const fit = inProcessFit(model);
  const asked = (o.endpointModels ?? []).includes(model);
  if (!asked && (!fit || fit.fits)) {
    return { kind: 'in-process', model, why: fit ? `float32 weights ${gb(fit.bytes)} ≤ ${gb(FIT_BUDGET_BYTES)} of one 80 GB GPU` : 'in process (size not known here)' };
  }
  const reason = asked ? 'sent to the endpoint by the parameter cell' : `float32 weights ${gb(fit!.bytes)} > ${gb(FIT_BUDGET_BYTES)} of one 80 GB GPU; 16-bit ${gb(fit!.bytes / 2)} in a serving engine`;
  const baseURL = endpointFor(model, o.endpoints);
  if (baseURL) return { kind: 'endpoint', baseURL, model, why: reason };
  return {
    kind: 'skipped',
    short: 'needs an embeddings endpoint (EMBEDDINGS_ENDPOINT; the command that starts one is in the routes table)',
    why: `needs an embeddings endpoint (${reason}): start one with \`${vllmEmbeddingCommand(model)}\` (docs/serving-engines.md) or \`${serveLlmCommand(model)}\` on a host that holds it, then set EMBEDDINGS_ENDPOINT to its http://<host>:8000/v1`,
  };
}

/** One model of a notebook's rows without training: the paper's size label and the model it ran. */
export interface PromptEolModel {
  /** OPT's size label as the paper prints it ('125M'), or the model's own name for an off-table row. */
  size: string;
  /** The Hub id (or folder) of the model the paper's row ran. */
  model: string;
  /** Whether it is one of the paper's OPT rows (the smoke stand-in replaces only those). */
  opt: boolean;
}

/**
 * The routes of several models; with `standIn` (the smoke preset's tiny OPT), the first OPT model
 * that would run in process runs the stand-in instead, and the other in-process OPT models are
 * skipped, saying so.
 */
export function promptEmbeddingRoutes<T extends PromptEolModel>(models: readonly T[], o: RouteOptions & { standIn?: string } = {}): Array<T & { route: PromptEmbeddingRoute }> {
  if (o.standIn !== undefined && o.standIn.trim() === '') throw new InputError('the stand-in model is an empty string');
  let stoodIn: T | undefined;
  return models.map((m) => {
    const route = promptEmbeddingRoute(m.model, o);
    if (!o.standIn || !m.opt || route.kind !== 'in-process') return { ...m, route };
    if (!stoodIn) {
      stoodIn = m;
      return { ...m, route: { kind: 'in-process' as const, model: o.standIn, standInFor: m.model, why: `smoke: the tiny random OPT stands in for ${m.model}` } };
    }
    const why = `smoke: the tiny OPT stood in once, for ${stoodIn.model} (not repeated per size)`;
    return { ...m, route: { kind: 'skipped' as const, why, short: why } };
  });
}
