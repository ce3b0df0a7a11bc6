/**
 * Load on `npm run serve-llm` (lib/llm/server.ts, continuous batching in
 * lib/llm/continuous-batcher.ts) on localhost with the toy llama2.c decoder, measured in one run:
 *
 * - closed-loop load at 1, 4 and 16 concurrent clients: each client sends a streamed greedy chat
 *   request (`max_tokens` fixed, prompts from a fixed list), waits for its end and sends the next,
 *   until the level's request count is reached or its time is up (requests in flight then finish);
 *   requests/s and tokens/s over the level's wall time, latency and time to first token
 *   percentiles (nearest rank: with n requests, p99 is the largest when n < 100);
 * - `/health` while generating: a probe GETs /health every `--probe-ms` during each level and
 *   reports its latency percentiles;
 * - the yardstick: one request alone against four sent at once (time until the last one
 *   ends), alternated five times, medians; for the server as configured and, in the same run, for a server with
 *   `--max-batch-size 1` (requests decoded one after another; the event loop still turns between
 *   steps); and for a server with `--generation-thread main` (the model's forward passes on the HTTP
 *   thread, as before the generation worker), whose /health waits for the forward pass under way.
 *
 * Every server is the real command in a child process (lib/llm/serve-llm-process.ts). Not a test:
 * nothing asserts a time. JSON goes to bench/results/serve-llm-load-<time>.json (the model as a
 * portable reference, no path of this machine).
 *
 *   npx tsx bench/serve-llm-load.ts [--model <dir>] [--backends cpu,wasm] [--max-tokens 32]
 *       [--max-batch-size 8] [--requests 8,16,32] [--level-seconds 60] [--probe-ms 50]
 */
import { execFileSync } from 'node:child_process';
import { arch, cpus, hostname, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { locateSharedDir } from '../lib/config.js';
import { startServeLlm, type ServeLlmProcess } from '../lib/llm/serve-llm-process.js';
import { sseData } from '../lib/llm/sse.js';
import { portableModelRef } from '../lib/report/training-record.js';
import { writeFileAtomic } from '../lib/util/atomic-write.js';
import { packageRoot } from '../lib/util/package-root.js';

const { values } = parseArgs({
  options: {
    model: { type: 'string' },
    backends: { type: 'string', default: 'cpu,wasm' },
    'max-tokens': { type: 'string', default: '32' },
    'max-batch-size': { type: 'string', default: '8' },
    concurrency: { type: 'string', default: '1,4,16' },
    requests: { type: 'string', default: '8,16,32' },
    'level-seconds': { type: 'string', default: '60' },
    'probe-ms': { type: 'string', default: '50' },
  },
});
const shared = locateSharedDir()?.path;
const modelDir = values.model ?? (shared ? join(shared, 'models', 'llama2c-stories260K') : undefined);
if (!modelDir) {
  console.error('bench: pass --model <llama2.c or HF decoder dir>, or keep ../shared beside the repository');
  process.exit(2);
}
const backends = values.backends!.split(',');
const maxTokens = Number(values['max-tokens']);
const maxBatchSize = Number(values['max-batch-size']);
const levels = values.concurrency!.split(',').map(Number);
const counts = values.requests!.split(',').map(Number);
if (counts.length !== levels.length) {
  console.error(`bench: --requests needs one count per --concurrency level (${levels.length})`);
  process.exit(2);
}
const levelSeconds = Number(values['level-seconds']);
const probeMs = Number(values['probe-ms']);
const PROMPTS = ['Once upon a time', 'Lily and Tom went to the park.', 'The little dog', 'One day, a big red ball', 'Tim was sad because', 'The sun was shining and'];

interface Timing {
  latency: number;
  ttft: number;
  tokens: number;
}

/** One streamed greedy chat request: seconds to the first text and to the end, completion tokens. */
async function chat(baseURL: string, prompt: string): Promise<Timing> {
  const t0 = performance.now();
  const res = await fetch(`${baseURL}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'bench', messages: [{ role: 'user', content: prompt }], temperature: 0, max_tokens: maxTokens, stream: true, stream_options: { include_usage: true } }),
  });
  if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}: ${await res.text()}`);
  let ttft = NaN;
  let tokens = 0;
  for await (const data of sseData(res.body as unknown as AsyncIterable<Uint8Array>)) {
    if (data === '[DONE]') break;
    const j = JSON.parse(data) as { choices: Array<{ delta?: { content?: string } }>; usage?: { completion_tokens: number } | null };
    if (Number.isNaN(ttft) && j.choices[0]?.delta?.content) ttft = (performance.now() - t0) / 1000;
    if (j.usage) tokens = j.usage.completion_tokens;
  }
  return { latency: (performance.now() - t0) / 1000, ttft, tokens };
}

/** Nearest-rank percentile of `xs` (q in (0, 1]). */
function percentile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))];
}

const pcts = (xs: number[], digits = 3) => {
  const r = (x: number) => Number(x.toFixed(digits));
  return xs.length === 0 ? null : { n: xs.length, p50: r(percentile(xs, 0.5)), p90: r(percentile(xs, 0.9)), p99: r(percentile(xs, 0.99)), max: r(Math.max(...xs)) };
};

/** GETs /health every probeMs until stopped; latencies in ms. */
function healthProbe(baseURL: string): { stop: () => Promise<number[]> } {
  const root = baseURL.replace(/\/v1$/, '');
  const out: number[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const t0 = performance.now();
      const res = await fetch(`${root}/health`);
      await res.text();
      out.push(performance.now() - t0);
      await new Promise((r) => setTimeout(r, probeMs));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return out;
    },
  };
}

/** Closed-loop load: `clients` clients until `count` requests were sent or `seconds` passed. */
async function level(baseURL: string, clients: number, count: number) {
  const timings: Timing[] = [];
  let sent = 0;
  const deadline = performance.now() + levelSeconds * 1000;
  const probe = healthProbe(baseURL);
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      while (sent < count && performance.now() < deadline) {
        const prompt = PROMPTS[(sent + c) % PROMPTS.length];
        sent++;
        timings.push(await chat(baseURL, prompt));
      }
    }),
  );
  const wall = (performance.now() - t0) / 1000;
  const health = await probe.stop();
  const tokens = timings.reduce((s, t) => s + t.tokens, 0);
  return {
    clients,
    requests: timings.length,
    stoppedBy: timings.length >= count ? 'count' : 'time',
    wallSeconds: Number(wall.toFixed(3)),
    requestsPerSecond: Number((timings.length / wall).toFixed(3)),
    tokensPerSecond: Number((tokens / wall).toFixed(1)),
    latencySeconds: pcts(timings.map((t) => t.latency)),
    timeToFirstTokenSeconds: pcts(timings.map((t) => t.ttft)),
    healthMs: pcts(health, 1),
  };
}

/**
 * One request alone against four sent at once (until the last ends), alternated five times so that
 * a drift in the machine's load touches both alike; medians, with /health probed meanwhile.
 */
async function fourVersusOne(baseURL: string) {
  const alone: number[] = [];
  const fours: number[] = [];
  let tokens: { alone: number; four: number[] } = { alone: 0, four: [] };
  const probe = healthProbe(baseURL);
  for (let i = 0; i < 5; i++) {
    const one = await chat(baseURL, PROMPTS[0]);
    alone.push(one.latency);
    const t0 = performance.now();
    const four = await Promise.all(PROMPTS.slice(0, 4).map((p) => chat(baseURL, p)));
    fours.push((performance.now() - t0) / 1000);
    tokens = { alone: one.tokens, four: four.map((f) => f.tokens) };
  }
  const health = await probe.stop();
  const one = percentile(alone, 0.5);
  const four = percentile(fours, 0.5);
  const r = (x: number) => Number(x.toFixed(3));
  return { oneAloneSeconds: r(one), oneAloneRuns: alone.map(r), fourAtOnceSeconds: r(four), fourAtOnceRuns: fours.map(r), ratio: r(four / one), completionTokens: tokens, healthMs: pcts(health, 1) };
}

async function withServer<T>(backend: string, batch: number, f: (s: ServeLlmProcess) => Promise<T>, generationThread: 'worker' | 'main' = 'worker'): Promise<T> {
  const s = await startServeLlm({ model: modelDir!, servedModelName: 'bench', backend, maxBatchSize: batch, generationThread });
  try {
    // Warm-up: kernels, wasm compile, the JIT on batches of several sizes.
    await chat(s.baseURL, PROMPTS[0]);
    await Promise.all(PROMPTS.slice(0, 4).map((p) => chat(s.baseURL, p)));
    return await f(s);
  } finally {
    await s.stop();
  }
}

// The machine may be shared: its load is part of the record.
const loadAtStart = loadavg().map((x) => Number(x.toFixed(2)));
const results = [];
for (const backend of backends) {
  const batched = await withServer(backend, maxBatchSize, async (s) => {
    const vs = await fourVersusOne(s.baseURL);
    console.log(`${backend}, max batch ${maxBatchSize}: one alone ${vs.oneAloneSeconds} s, four at once ${vs.fourAtOnceSeconds} s (${vs.ratio}x); /health p50 ${vs.healthMs?.p50} ms, max ${vs.healthMs?.max} ms`);
    const loads = [];
    for (const [i, clients] of levels.entries()) {
      const r = await level(s.baseURL, clients, counts[i]);
      console.log(
        `${backend}, ${clients} clients: ${r.requests} requests in ${r.wallSeconds} s = ${r.requestsPerSecond} req/s, ${r.tokensPerSecond} tokens/s; latency p50 ${r.latencySeconds?.p50} p90 ${r.latencySeconds?.p90} p99 ${r.latencySeconds?.p99} s; first token p50 ${r.timeToFirstTokenSeconds?.p50} s; /health p50 ${r.healthMs?.p50} p99 ${r.healthMs?.p99} max ${r.healthMs?.max} ms`,
      );
      loads.push(r);
    }
    return { fourVersusOne: vs, levels: loads };
  });
  const sequential = await withServer(backend, 1, async (s) => {
    const vs = await fourVersusOne(s.baseURL);
    console.log(`${backend}, max batch 1: one alone ${vs.oneAloneSeconds} s, four at once ${vs.fourAtOnceSeconds} s (${vs.ratio}x); /health p50 ${vs.healthMs?.p50} ms, max ${vs.healthMs?.max} ms`);
    return vs;
  });
  // The model on the HTTP thread (the server before its generation worker), for /health in one run.
  const mainThread = await withServer(
    backend,
    maxBatchSize,
    async (s) => {
      const vs = await fourVersusOne(s.baseURL);
      console.log(`${backend}, max batch ${maxBatchSize}, model on the HTTP thread: one alone ${vs.oneAloneSeconds} s, four at once ${vs.fourAtOnceSeconds} s (${vs.ratio}x); /health p50 ${vs.healthMs?.p50} ms, max ${vs.healthMs?.max} ms`);
      return vs;
    },
    'main',
  );
  results.push({ backend, maxBatchSize, generationThread: 'worker', ...batched, maxBatchSize1: { fourVersusOne: sequential }, generationThreadMain: { fourVersusOne: mainThread } });
}

let commit = 'unknown';
try {
  commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: packageRoot(), encoding: 'utf8' }).trim();
} catch {
  // not a git checkout
}
const when = new Date().toISOString();
const record = {
  benchmark: 'serve-llm-load',
  when,
  commit,
  model: portableModelRef(modelDir),
  method: {
    request: `streamed greedy chat completion, max_tokens ${maxTokens}, prompts cycled from a fixed list of ${PROMPTS.length}`,
    levels: levels.map((c, i) => ({ clients: c, maxRequests: counts[i], maxSeconds: levelSeconds })),
    healthProbeEveryMs: probeMs,
    percentiles: 'nearest rank',
    fourVersusOne: 'one request alone vs four sent at once (until the last ends), alternated 5 times, medians; the same with --max-batch-size 1, and with --generation-thread main (the model on the HTTP thread), for comparison',
    generationThread: 'worker (the default) for every server but generationThreadMain',
  },
  machine: { host: hostname(), cpu: cpus()[0]?.model, cores: cpus().length, arch: arch(), node: process.version, loadAverageAtStart: loadAtStart, loadAverageAtEnd: loadavg().map((x) => Number(x.toFixed(2))) },
  results,
};
const file = join(packageRoot(), 'bench', 'results', `serve-llm-load-${when.replace(/[:.]/g, '-')}.json`);
await writeFileAtomic(file, JSON.stringify(record, null, 2) + '\n');
console.log(`wrote bench/results/${file.split('/').pop()}`);
