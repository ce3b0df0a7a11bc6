/**
 * What an OpenAI-compatible server serves: `GET {baseURL}/models` (vLLM, this project's
 * `npm run serve-llm`, OpenAI) lists the model names a request may ask for — vLLM's is the
 * `--served-model-name`, by default the model it was started with (e.g. `facebook/opt-66b`).
 *
 * Asked once before a run is sent to an endpoint, so that a server that is down, or serves another
 * model, is one clear line at once instead of a request retried with backoff and then refused.
 * One attempt, no retries; errors are UnavailableErrors naming the URL and what was wrong.
 */
import { UnavailableError } from '../util/errors.js';
import { isObject, nonEmpty, serverMessage } from './openai-endpoint.js';

export interface ServedModelsOptions {
  /** Sent as a bearer token (default: OPENAI_API_KEY of `env`, when set). */
  apiKey?: string;
  /** Time limit of the request in ms (default 10 s). */
  timeoutMs?: number;
  env?: NodeJS.ProcessEnv;
}

/** The `id`s of `GET {baseURL}/models`, in the server's order. */
export async function servedModels(baseURL: string, o: ServedModelsOptions = {}): Promise<string[]> {
  let url: string;
  try {
    url = new URL(`${baseURL.replace(/\/+$/, '')}/models`).href;
  } catch {
    throw new UnavailableError(`the endpoint '${baseURL}' is not a URL (expected e.g. http://127.0.0.1:8000/v1)`);
  }
  const key = nonEmpty(o.apiKey) ?? nonEmpty((o.env ?? process.env).OPENAI_API_KEY);
  let res: Response;
  try {
    res = await fetch(url, { headers: { accept: 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) }, signal: AbortSignal.timeout(o.timeoutMs ?? 10_000) });
  } catch (e) {
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    throw new UnavailableError(`no answer from ${url}: ${cause?.code ?? cause?.message ?? (e as Error).message}`);
  }
  const text = await res.text().catch(() => '');
  if (!res.ok) throw new UnavailableError(`GET ${url} answered HTTP ${res.status}: ${serverMessage(text)}`);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new UnavailableError(`GET ${url} did not answer JSON: ${serverMessage(text)}`);
  }
  const data = isObject(json) ? json.data : undefined;
  if (!Array.isArray(data) || !data.every((m) => isObject(m) && typeof m.id === 'string')) {
    throw new UnavailableError(`GET ${url} did not answer a model list ({ data: [{ id }, …] }): ${serverMessage(text)}`);
  }
  return data.map((m) => (m as { id: string }).id);
}
