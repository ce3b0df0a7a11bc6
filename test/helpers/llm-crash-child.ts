/**
 * A run of LLM-supervised generation that crashes: it exits the process (no cleanup, no graceful
 * stop) right after its k-th answer, with other requests still in flight. test/llm-client.test.ts
 * runs it in a child process and then resumes the run from the cache.
 *
 * argv: <baseURL> <cacheDir> <k> <texts as JSON> <concurrency>
 */
import { OpenAIChatClient } from '../../lib/llm/openai-client.js';
import { generateSupervisedPairs } from '../../lib/llm/llm-supervision.js';

const [baseURL, cacheDir, k, textsJson, concurrency] = process.argv.slice(2);
const client = new OpenAIChatClient({ baseURL, model: 'fake-llm', env: {}, retry: { maxRetries: 0 } });
let answers = 0;
await generateSupervisedPairs(client, JSON.parse(textsJson) as string[], {
  cacheDir,
  size: 2,
  concurrency: Number(concurrency),
  onResult: () => {
    if (++answers === Number(k)) process.exit(7);
  },
});
process.exit(0);
