/**
 * An OpenAI-compatible endpoint configured by environment variables, or the reason there is none:
 * what a notebook's parameter cell lists as one of its generators (AnglE Table 5's ChatGPT row:
 * OpenAI itself; its ChatGLM row: a vLLM / llama.cpp / TGI server a user runs) without failing
 * where the endpoint is not configured — the row is then marked, never filled with made-up data.
 *
 * With prefix `OPENAI` the variables are the client's own (OPENAI_BASE_URL, OPENAI_API_KEY,
 * OPENAI_MODEL: ./openai-client.ts); another prefix reads `<PREFIX>_BASE_URL`, `<PREFIX>_API_KEY`
 * and `<PREFIX>_MODEL`. An OpenAI endpoint counts as configured when its base URL or its key is
 * set (OpenAI's own URL is the default base URL; it needs the key); another prefix needs its base URL.
 */
import { OpenAIChatClient, type OpenAIClientOptions } from './openai-client.js';

export interface EndpointFromEnvOptions extends Omit<OpenAIClientOptions, 'baseURL' | 'apiKey' | 'model' | 'env'> {
  /** Variable prefix: 'OPENAI' (default) or e.g. 'CHATGLM'. */
  prefix?: string;
  /** The model when `<PREFIX>_MODEL` is not set. */
  defaultModel: string;
  env?: NodeJS.ProcessEnv;
}

/** The configured client, or (generator undefined) why there is none; the variables that were read. */
export interface EndpointFromEnv {
  generator?: OpenAIChatClient;
  why?: string;
  variables: string[];
}

const set = (v: string | undefined) => v !== undefined && v.trim() !== '';

/** The endpoint the environment configures (see the file comment). */
export function endpointFromEnv(o: EndpointFromEnvOptions): EndpointFromEnv {
  const env = o.env ?? process.env;
  const prefix = o.prefix ?? 'OPENAI';
  const names = { baseURL: `${prefix}_BASE_URL`, apiKey: `${prefix}_API_KEY`, model: `${prefix}_MODEL` };
  const variables = [names.baseURL, names.apiKey, names.model];
  const baseURL = env[names.baseURL];
  const apiKey = env[names.apiKey];
  if (prefix === 'OPENAI' ? !set(baseURL) && !set(apiKey) : !set(baseURL)) {
    const what = prefix === 'OPENAI' ? `${names.apiKey} (OpenAI) or ${names.baseURL} (any OpenAI-compatible server)` : `${names.baseURL} (an OpenAI-compatible server, e.g. vLLM or llama.cpp serving the model)`;
    return { why: `no endpoint configured: set ${what}`, variables };
  }
  const model = set(env[names.model]) ? env[names.model]!.trim() : o.defaultModel;
  const { prefix: _p, defaultModel: _d, env: _e, ...client } = o;
  // The client reads OPENAI_* itself; pass the prefixed values explicitly so another prefix never falls back to OpenAI's.
  const generator = new OpenAIChatClient({ ...client, baseURL: set(baseURL) ? baseURL : undefined, apiKey: set(apiKey) ? apiKey : undefined, model, env: prefix === 'OPENAI' ? env : {} });
  return { generator, variables };
}
