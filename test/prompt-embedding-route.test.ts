/**
 * Where notebook 09's PromptEOL rows without training are embedded, and what comes of it
 * (lib/experiments/prompt-embedding-route.ts, lib/experiments/prompt-evaluations.ts,
 * lib/llm/served-models.ts):
 * - the routing rule over the real KNOWN_CONFIGS, checked against fit decisions and
 *   tensor-parallel sizes this file computes on its own from the Hub configs' numbers;
 * - the smoke stand-in (the golden tiny OPT) and fitSentencesToContext on its 64 positions;
 * - the endpoint path against the real `scripts/serve-llm.ts` (a child process on 127.0.0.1, the
 *   same server `npm run serve-llm` starts) serving the golden tiny OPT under a name, compared with
 *   the same rows evaluated in process on the same weights; the record and embedding caches; an
 *   endpoint that serves another model, a closed port, and a prompt longer than the served
 *   model's context;
 * - Tables 1 and 4's models with the smoke routes as evaluation rows of a Plan
 *   (lib/experiments/prompt-evaluation-rows.ts), and the tables built from its results (routes,
 *   Table 1's cell sources, ICL improvements).
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { initBackend } from '../lib/backend/index.js';
import { PROMPTEOL_TEMPLATE, promptFor, PromptSentenceEncoder } from '../lib/embed/prompt-encoder.js';
import { loadStsTask } from '../lib/data/sts.js';
import type { StsTaskName } from '../lib/data/registry.js';
import { sentevalStsEvaluator } from '../lib/eval/senteval-sts-evaluator.js';
import { inProcessFit, promptEmbeddingRoutes, smokeOptStandIn, tensorParallelSize, type PromptEmbeddingRoute } from '../lib/experiments/prompt-embedding-route.js';
import { Plan } from '../lib/experiments/plan.js';
import { promptEolRunResults, promptEolTable1Rows } from '../lib/experiments/prompt-evaluation-rows.js';
import {
  evaluatePromptRows,
  evaluatePromptRowsThroughEndpoint,
  fitSentencesToContext,
  optIclImprovements,
  promptEolRows,
  promptRoutesTable,
} from '../lib/experiments/prompt-evaluations.js';
import { optDemonstrationOf, prompteolTable1Models } from '../lib/experiments/tables/prompteol.js';
import { servedModels } from '../lib/llm/served-models.js';
import { runCardPath } from '../lib/report/run-card.js';
import { loadModel } from '../lib/models/auto.js';
import type { LoadedModel } from '../lib/models/types.js';
import { InputError, UnavailableError } from '../lib/util/errors.js';
import { DATA_DIR, SHARED_DIR } from './helpers/env.js';
import { startServeLlm, type ServeLlm } from './helpers/serve-llm.js';

// ---------------------------------------------------------------------------------------------
// The routing rule, checked against numbers computed here from the Hub configs of facebook/opt-*.
// ---------------------------------------------------------------------------------------------

/** One 80 GB GPU less the CUDA context and allocator slack: the budget the rule states (72 GB). */
const GPU_BUDGET = 72e9;

/**
 * The Hub config.json numbers of each OPT size (hidden, layers, heads, FFN width, embedding width),
 * typed in again here so the test does not read KNOWN_CONFIGS to decide what KNOWN_CONFIGS decides.
 */
const OPT_HUB = {
  'facebook/opt-125m': { size: '125M', h: 768, layers: 12, heads: 12, ffn: 3072, proj: 768 },
  'facebook/opt-350m': { size: '350M', h: 1024, layers: 24, heads: 16, ffn: 4096, proj: 512 },
  'facebook/opt-1.3b': { size: '1.3B', h: 2048, layers: 24, heads: 32, ffn: 8192, proj: 2048 },
  'facebook/opt-2.7b': { size: '2.7B', h: 2560, layers: 32, heads: 32, ffn: 10240, proj: 2560 },
  'facebook/opt-6.7b': { size: '6.7B', h: 4096, layers: 32, heads: 32, ffn: 16384, proj: 4096 },
  'facebook/opt-13b': { size: '13B', h: 5120, layers: 40, heads: 40, ffn: 20480, proj: 5120 },
  'facebook/opt-30b': { size: '30B', h: 7168, layers: 48, heads: 56, ffn: 28672, proj: 7168 },
  'facebook/opt-66b': { size: '66B', h: 9216, layers: 64, heads: 72, ffn: 36864, proj: 9216 },
} as const;
type OptId = keyof typeof OPT_HUB;
const OPT_IDS = Object.keys(OPT_HUB) as OptId[];

/**
 * A transformer's parameters from its dominant terms: per layer the four attention projections
 * (4h²) and the two FFN matrices (2·h·ffn), plus token (V·proj) and position (2050·h) embeddings;
 * biases and LayerNorms (< 0.5 %) left out.
 */
function estimatedParameters(id: OptId): number {
  const c = OPT_HUB[id];
  return c.layers * (4 * c.h * c.h + 2 * c.h * c.ffn) + 50272 * c.proj + 2050 * c.h;
}

/** The fewest GPUs, a power of two dividing the heads, whose budget each holds the 16-bit weights. */
function expectedTensorParallel(id: OptId): number {
  const bytes16 = estimatedParameters(id) * 2;
  let n = 1;
  while (OPT_HUB[id].heads % n !== 0 || bytes16 / n > GPU_BUDGET) n *= 2;
  return n;
}

/** In process when the float32 weights (4 bytes a parameter) fit one GPU's budget. */
function expectedInProcess(id: OptId): boolean {
  return estimatedParameters(id) * 4 <= GPU_BUDGET;
}

function optModels() {
  return prompteolTable1Models();
}

function routeOf(routes: ReadonlyArray<{ model: string; route: PromptEmbeddingRoute }>, model: string): PromptEmbeddingRoute {
  const r = routes.find((x) => x.model === model);
  assert.ok(r, `no route for ${model}`);
  return r.route;
}

test('the estimate this test routes by agrees with the project\'s parameter counts (within 2 %), and its own arithmetic puts 125M…13B in process, 30B and 66B out', () => {
  for (const id of OPT_IDS) {
    const fit = inProcessFit(id);
    assert.ok(fit, `${id} is a known config`);
    const est = estimatedParameters(id);
    assert.ok(Math.abs(fit.parameters - est) / est < 0.02, `${id}: ${fit.parameters} parameters counted, ${est} estimated`);
    assert.equal(fit.bytes, fit.parameters * 4);
  }
  // The sizes the paper's names promise, decided by the estimate alone.
  assert.deepEqual(
    OPT_IDS.filter(expectedInProcess),
    ['facebook/opt-125m', 'facebook/opt-350m', 'facebook/opt-1.3b', 'facebook/opt-2.7b', 'facebook/opt-6.7b', 'facebook/opt-13b'],
  );
  // 66B in 16 bits is about 131 GB: two GPUs of 72 GB; 30B's 60 GB fit one.
  assert.equal(expectedTensorParallel('facebook/opt-66b'), 2);
  assert.equal(expectedTensorParallel('facebook/opt-30b'), 1);
  assert.equal(inProcessFit('someone/unknown-decoder'), undefined);
});

test('tensorParallelSize is the fewest GPUs whose 72 GB hold the 16-bit weights, for every OPT size; 1 for an unknown model', () => {
  for (const id of OPT_IDS) assert.equal(tensorParallelSize(id), expectedTensorParallel(id), id);
  assert.equal(tensorParallelSize('someone/unknown-decoder'), 1);
});

test('without an endpoint: OPT 125M…13B run in process, 30B and 66B are skipped naming the vLLM command (tensor-parallel as the weights need) and serve-llm', () => {
  const routes = promptEmbeddingRoutes(optModels());
  assert.equal(routes.length, 8);
  for (const id of OPT_IDS) {
    const r = routeOf(routes, id);
    if (expectedInProcess(id)) {
      assert.equal(r.kind, 'in-process', `${id}: ${r.why}`);
      assert.equal((r as { model: string }).model, id);
      assert.equal((r as { standInFor?: string }).standInFor, undefined);
      continue;
    }
    assert.equal(r.kind, 'skipped', id);
    if (r.kind !== 'skipped') continue;
    assert.match(r.why, new RegExp(`vllm serve ${id.replace('.', '\\.')} `), r.why);
    assert.ok(r.why.includes(`--tensor-parallel-size ${expectedTensorParallel(id)} `), r.why);
    assert.ok(r.why.includes(`--served-model-name ${id}`), r.why);
    assert.ok(r.why.includes(`npm run serve-llm -- --model ${id}`), r.why);
    assert.match(r.why, /EMBEDDINGS_ENDPOINT/);
    assert.match(r.short, /needs an embeddings endpoint/);
    assert.ok(r.short.length < r.why.length);
  }
  // An empty endpoint setting (the parameter cell's default '') names none.
  assert.equal(routeOf(promptEmbeddingRoutes(optModels(), { endpoints: '  ' }), 'facebook/opt-66b').kind, 'skipped');
});

test('one endpoint for every routed model (a string, trimmed): 30B and 66B go there, the others still run in process', () => {
  const url = 'http://gpu-host:8000/v1';
  const routes = promptEmbeddingRoutes(optModels(), { endpoints: `  ${url} ` });
  for (const id of OPT_IDS) {
    const r = routeOf(routes, id);
    if (expectedInProcess(id)) assert.equal(r.kind, 'in-process', id);
    else assert.deepEqual({ kind: r.kind, baseURL: (r as { baseURL?: string }).baseURL, model: (r as { model?: string }).model }, { kind: 'endpoint', baseURL: url, model: id });
  }
  // The reason the endpoint was chosen: the float32 weights over one GPU's budget.
  assert.match(routeOf(routes, 'facebook/opt-66b').why, /float32 weights .* > 72\.0 GB/);
});

test('endpoints per model (a record): only the named model goes there; the other large one is skipped', () => {
  const routes = promptEmbeddingRoutes(optModels(), { endpoints: { 'facebook/opt-66b': 'http://a:8000/v1', 'facebook/opt-30b': ' ' } });
  const r66 = routeOf(routes, 'facebook/opt-66b');
  assert.equal(r66.kind, 'endpoint');
  assert.equal((r66 as { baseURL: string }).baseURL, 'http://a:8000/v1');
  assert.equal(routeOf(routes, 'facebook/opt-30b').kind, 'skipped');
  assert.equal(routeOf(routes, 'facebook/opt-13b').kind, 'in-process');
});

test('endpointModels sends a model one GPU holds to the endpoint (skipped without one); an unknown model runs in process unless sent', () => {
  const models = prompteolTable1Models({ llama: { model: 'someone/unknown-decoder', name: 'LLaMA', demonstration: optDemonstrationOf('6.7B') } });
  const sent = promptEmbeddingRoutes(models, { endpoints: 'http://e:8000/v1', endpointModels: ['facebook/opt-125m', 'someone/unknown-decoder'] });
  for (const id of ['facebook/opt-125m', 'someone/unknown-decoder']) {
    const r = routeOf(sent, id);
    assert.equal(r.kind, 'endpoint', id);
    assert.match(r.why, /sent to the endpoint by the parameter cell/);
  }
  assert.equal(routeOf(sent, 'facebook/opt-350m').kind, 'in-process');
  const noEndpoint = promptEmbeddingRoutes(models, { endpointModels: ['facebook/opt-125m'] });
  const r125 = routeOf(noEndpoint, 'facebook/opt-125m');
  assert.equal(r125.kind, 'skipped');
  assert.match(r125.why, /sent to the endpoint by the parameter cell.*vllm serve facebook\/opt-125m .*--tensor-parallel-size 1 /);
  const unknown = routeOf(noEndpoint, 'someone/unknown-decoder');
  assert.equal(unknown.kind, 'in-process');
  assert.match(unknown.why, /size not known/);
});

test('smokeOptStandIn finds the golden tiny OPT in the shared folder, and nothing in a folder without it', async (t) => {
  if (!SHARED_DIR) return t.skip('no shared folder (ANGLE_SHARED_DIR or ../shared)');
  const found = smokeOptStandIn({ ANGLE_SHARED_DIR: SHARED_DIR });
  assert.equal(found, join(SHARED_DIR, 'golden', 'opt-tiny-seed7', 'model'));
  const empty = await mkdtemp(join(tmpdir(), 'no-shared-'));
  try {
    assert.equal(smokeOptStandIn({ ANGLE_SHARED_DIR: empty }), undefined);
  } finally {
    await rm(empty, { recursive: true, force: true });
  }
});

test('the smoke stand-in runs once, for the first OPT size that would run in process, marked; the other in-process sizes say so; 30B/66B and off-table rows keep their routes', () => {
  const standIn = '/some/where/opt-tiny-seed7/model';
  const models = prompteolTable1Models({ llama: { model: 'someone/unknown-decoder', name: 'LLaMA', demonstration: optDemonstrationOf('6.7B') } });
  const routes = promptEmbeddingRoutes(models, { standIn });
  const first = routeOf(routes, 'facebook/opt-125m');
  assert.deepEqual({ kind: first.kind, model: (first as { model: string }).model, standInFor: (first as { standInFor?: string }).standInFor }, { kind: 'in-process', model: standIn, standInFor: 'facebook/opt-125m' });
  assert.match(first.why, /smoke/);
  for (const id of OPT_IDS.slice(1)) {
    const r = routeOf(routes, id);
    assert.equal(r.kind, 'skipped', id);
    if (expectedInProcess(id)) assert.match(r.why, /stood in once, for facebook\/opt-125m/, id);
    else assert.match(r.why, /vllm serve/, id);
  }
  const llama = routeOf(routes, 'someone/unknown-decoder');
  assert.equal(llama.kind, 'in-process');
  assert.equal((llama as { standInFor?: string }).standInFor, undefined, 'an off-table row is never replaced by the tiny OPT');
  assert.equal(routes.filter((r) => r.route.kind === 'in-process' && r.route.standInFor).length, 1);

  // 125M sent to an endpoint: the stand-in goes to the next size that runs in process.
  const shifted = promptEmbeddingRoutes(models, { standIn, endpoints: 'http://e:8000/v1', endpointModels: ['facebook/opt-125m'] });
  assert.equal(routeOf(shifted, 'facebook/opt-125m').kind, 'endpoint');
  assert.equal((routeOf(shifted, 'facebook/opt-350m') as { standInFor?: string }).standInFor, 'facebook/opt-350m');
  assert.equal(routeOf(shifted, 'facebook/opt-66b').kind, 'endpoint');

  assert.throws(() => promptEmbeddingRoutes(models, { standIn: ' ' }), InputError);
});

// ---------------------------------------------------------------------------------------------
// The golden tiny OPT: fitSentencesToContext, and the endpoint path over the real serve-llm.
// ---------------------------------------------------------------------------------------------

const OPT_DIR = SHARED_DIR ? join(SHARED_DIR, 'golden', 'opt-tiny-seed7', 'model') : undefined;
const SERVED_NAME = 'opt-tiny-seed7';
/** Table 4's demonstration for OPT 125M ('A man is smoking.' → Smoking). */
const DEMONSTRATION = optDemonstrationOf('125M');
/** The template's text after `{text}`: what every prompt must end with (its last token is the embedding). */
const TEMPLATE_TAIL = PROMPTEOL_TEMPLATE.slice(PROMPTEOL_TEMPLATE.indexOf('{text}') + '{text}'.length);

let opt: LoadedModel | undefined;
let server: ServeLlm | undefined;
const tmp: string[] = [];

before(async () => {
  if (!OPT_DIR || !existsSync(join(OPT_DIR, 'config.json')) || !DATA_DIR) return;
  [server] = await Promise.all([
    startServeLlm(['--model', OPT_DIR, '--served-model-name', SERVED_NAME, '--backend', 'cpu']),
    (async () => {
      await initBackend('cpu', { quiet: true });
      opt = await loadModel(OPT_DIR);
    })(),
  ]);
});

after(async () => {
  opt?.model.dispose();
  if (server) assert.equal(await server.stop(), 0);
  await Promise.all(tmp.map((d) => rm(d, { recursive: true, force: true })));
});

async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'prompt-route-'));
  tmp.push(d);
  return d;
}

function ready(t: { skip: (msg: string) => void }): boolean {
  if (!opt || !server) t.skip('needs the golden tiny OPT (<shared>/golden/opt-tiny-seed7) and the data folder (<shared>/data)');
  return Boolean(opt && server);
}

function promptTokens(text: string, demonstrations = [] as (typeof DEMONSTRATION)[]): number {
  return opt!.tokenizer.encode(promptFor(text, { demonstrations, prepareText: 'prompteol' })).ids.length;
}

/** A port nothing listens on: one the OS just handed out and took back. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** `POST /v1/embeddings` requests the server has logged, once its log has stopped growing. */
async function embeddingRequests(): Promise<number> {
  const count = () => (server!.stderr().match(/POST \/v1\/embeddings 200 /g) ?? []).length;
  let last = count();
  for (;;) {
    await new Promise((r) => setTimeout(r, 150));
    const now = count();
    if (now === last) return now;
    last = now;
  }
}

/** The sets of `tasks` at `pairsPerSet`, every sentence of them. */
function sentencesOf(tasks: readonly StsTaskName[], pairsPerSet: number): string[] {
  return tasks.flatMap((task) => loadStsTask(task, { dataDir: DATA_DIR, splits: ['test'] }).flatMap((s) => s.pairs.slice(0, pairsPerSet).flatMap((p) => [p.a, p.b])));
}

test('fitSentencesToContext (tiny OPT, 64 positions): a long sentence is cut until the whole prompt fits, the template kept whole; short ones are untouched', (t) => {
  if (!ready(t)) return;
  const max = opt!.model.maxPositions;
  assert.equal(max, 64);
  const long = Array.from({ length: 40 }, (_, i) => `word${i} and more`).join(' ');
  const short = 'A man is playing a guitar.';
  for (const demonstrations of [[], [DEMONSTRATION]]) {
    const prompt = { demonstrations, prepareText: 'prompteol' as const };
    const fit = fitSentencesToContext(opt!, prompt);
    assert.ok(promptTokens(long, demonstrations) > max, 'the long sentence does not fit as it is');
    const cut = fit(long);
    assert.notEqual(cut, long);
    assert.ok(long.startsWith(cut.trim()), `the cut is the sentence's beginning: ${JSON.stringify(cut)}`);
    const filled = promptFor(cut, prompt);
    const n = opt!.tokenizer.encode(filled).ids.length;
    assert.ok(n <= max, `${n} tokens after the cut, context ${max}`);
    // Cut no further than byte-level BPE's joins need: within a few tokens of the context.
    assert.ok(n >= max - 3, `${n} tokens after the cut: cut far more than needed for ${max}`);
    assert.ok(filled.endsWith(TEMPLATE_TAIL), `the template's tail is kept: ${JSON.stringify(filled.slice(-40))}`);
    if (demonstrations.length) assert.ok(filled.startsWith(promptFor(DEMONSTRATION.text, { prepareText: 'prompteol' }).slice(0, 20)), 'the demonstration is kept whole, first');
    assert.equal(fit(short), short);
    assert.equal(fit(''), '');
  }
  // A sentence of the suite that overflows (STS13 FNWN's first, with the demonstration), cut to fit.
  const fnwn = loadStsTask('STS13', { dataDir: DATA_DIR, splits: ['test'] }).find((s) => s.name === 'FNWN')!.pairs[0].a;
  assert.ok(promptTokens(fnwn, [DEMONSTRATION]) > max);
  assert.ok(promptTokens(fitSentencesToContext(opt!, { demonstrations: [DEMONSTRATION], prepareText: 'prompteol' })(fnwn), [DEMONSTRATION]) <= max);
  // Demonstrations that alone fill the context: no sentence fits.
  assert.throws(() => fitSentencesToContext(opt!, { demonstrations: Array(6).fill(DEMONSTRATION), prepareText: 'prompteol' }), (e: Error) => e instanceof InputError && /template alone has \d+ tokens, the model's context 64/.test(e.message));
});

/**
 * Tasks whose sets' first 4 pairs fill prompts within the tiny OPT's 64 positions, with and without
 * the demonstration (STS13's FNWN and STS16's postediting have longer ones): on these nothing is
 * cut on either side, so both paths embed exactly the same prompts. Three tasks (7 sets, 56
 * sentences a row) keep the pure-JS CPU forwards of both sides short.
 */
const FITTING_TASKS: StsTaskName[] = ['STS12', 'STSBenchmark', 'SICKRelatedness'];
/** A task with prompts longer than 64 positions (STS13 FNWN), and STS-B for the test Spearman. */
const OVERFLOWING_TASKS: StsTaskName[] = ['STS13', 'STSBenchmark'];
const PAIRS = 4;

test('PromptEOL rows through the real serve-llm agree with the same rows in process; the records differ in key; a rerun reuses the record, a new record reuses the embedding cache', async (t) => {
  if (!ready(t)) return;
  // The premise: no prompt of these sets needs cutting.
  for (const s of sentencesOf(FITTING_TASKS, PAIRS)) assert.ok(promptTokens(s, [DEMONSTRATION]) <= 64, `prompt of ${JSON.stringify(s)} outgrows 64 positions`);
  const evaluator = sentevalStsEvaluator({ dataDir: DATA_DIR, pairsPerSet: PAIRS, tasks: FITTING_TASKS });
  const rows = promptEolRows('OPT tiny', DEMONSTRATION);
  const here = await tempDir();
  const there = await tempDir();

  const inProcess = await evaluatePromptRows({ id: OPT_DIR!, loaded: opt }, rows, { evaluator, experiment: 'route-in-process', resultsDir: here });
  const before0 = await embeddingRequests();
  const endpoint = await evaluatePromptRowsThroughEndpoint({ baseURL: server!.baseURL, model: SERVED_NAME }, rows, { evaluator, experiment: 'route-endpoint', resultsDir: there });
  assert.equal(endpoint.why, undefined, endpoint.why);
  assert.deepEqual(endpoint.runs.map((r) => r.label), rows.map((r) => r.label));
  assert.deepEqual(inProcess.map((r) => r.label), rows.map((r) => r.label));
  const sent = (await embeddingRequests()) - before0;
  assert.ok(sent >= 2, `the endpoint was asked (${sent} requests)`);

  let maxCosine = 0;
  let maxMetric = 0;
  for (let i = 0; i < rows.length; i++) {
    const a = inProcess[i].run;
    const b = endpoint.runs[i].run;
    // Same prompt text, same BOS, same left padding and last-token state on the same float32 CPU
    // forward, vectors sent as base64 float32 (exact): only the batching may differ (32 prompts a
    // pass here, 16 in the server, 64 a request), i.e. how many masked pad columns a softmax and
    // matmul sum over — float32 rounding, ~1e-7 relative. So cosines within 1e-5, and Spearman, a
    // function of their ranks, within 1e-6 (ρ × 100): room for rounding only, none for a different
    // prompt, padding side or pooled token. (Measured on this machine: both differences are 0.)
    const pa = a.predictions!.predictions;
    const pb = b.predictions!.predictions;
    assert.equal(pa.length, pb.length);
    assert.ok(pa.length === PAIRS, `STS-B test's ${PAIRS} cosines are kept`);
    for (let k = 0; k < pa.length; k++) maxCosine = Math.max(maxCosine, Math.abs(pa[k] - pb[k]));
    for (const m of Object.keys(a.record.metrics)) maxMetric = Math.max(maxMetric, Math.abs(a.record.metrics[m] - b.record.metrics[m]));
    for (let k = 0; k < pa.length; k++) assert.ok(Math.abs(pa[k] - pb[k]) <= 1e-5, `${rows[i].label}: cosine ${k} ${pa[k]} in process, ${pb[k]} through the endpoint`);
    const metrics = Object.keys(a.record.metrics).filter((m) => m.startsWith('test_'));
    assert.deepEqual(metrics.sort(), Object.keys(b.record.metrics).filter((m) => m.startsWith('test_')).sort());
    assert.ok(metrics.includes('test_avg') && metrics.includes('test_STS12'));
    for (const m of metrics) assert.ok(Math.abs(a.record.metrics[m] - b.record.metrics[m]) <= 1e-6, `${rows[i].label} ${m}: ${a.record.metrics[m]} in process, ${b.record.metrics[m]} through the endpoint`);
    // Different records: the key hashes the served name instead of the weights, and the settings say who embedded.
    assert.notEqual(a.record.details?.runKey, b.record.details?.runKey);
    assert.equal(b.record.details?.servedModel, SERVED_NAME);
    assert.equal(b.record.details?.endpoint, new URL(server!.baseURL).host);
    assert.match(String(b.record.config.embeddedBy), /\/v1\/embeddings/);
    assert.equal(a.record.config.embeddedBy, undefined);
    assert.equal(b.record.model.id, SERVED_NAME);
    assert.deepEqual(a.record.config.demonstrations, b.record.config.demonstrations);
  }
  t.diagnostic(`in process vs endpoint: max |Δ cosine| ${maxCosine.toExponential(2)} (STS-B test), max |Δ metric| ${maxMetric.toExponential(2)} (ρ × 100)`);
  // STS-B test's 4 pairs have no bootstrap interval (a resample of one repeated pair has no
  // correlation): the run card beside each record says so instead of failing the evaluation.
  for (const { run } of [...inProcess, ...endpoint.runs]) {
    const card = readFileSync(runCardPath(run.file), 'utf8');
    assert.match(card, /No bootstrap interval of `test_spearman`: bootstrap: resample \d+ gave an undefined correlation/);
    assert.ok(!card.includes(tmpdir()), 'the card names no path of this machine');
  }
  // The demonstration changes the embeddings (the rows are not the same run twice).
  assert.notDeepEqual(endpoint.runs[0].run.predictions!.predictions, endpoint.runs[1].run.predictions!.predictions);

  // Again: both records reused, nothing sent.
  const logs: string[] = [];
  const again = await evaluatePromptRowsThroughEndpoint({ baseURL: server!.baseURL, model: SERVED_NAME }, rows, { evaluator, experiment: 'route-endpoint', resultsDir: there, log: (l) => logs.push(l) });
  assert.deepEqual(again.runs.map((r) => r.run.record.runId), endpoint.runs.map((r) => r.run.record.runId));
  assert.equal(logs.filter((l) => /reused run/.test(l)).length, rows.length, logs.join('\n'));
  assert.equal(await embeddingRequests(), before0 + sent, 'a reused record sends nothing');

  // A new record (another experiment, same results folder): evaluated again from the cached vectors.
  const cached = await evaluatePromptRowsThroughEndpoint({ baseURL: server!.baseURL, model: SERVED_NAME }, rows, { evaluator, experiment: 'route-endpoint-again', resultsDir: there });
  assert.equal(cached.why, undefined);
  assert.notEqual(cached.runs[0].run.record.runId, endpoint.runs[0].run.record.runId);
  assert.deepEqual(cached.runs.map((r) => r.run.record.metrics), endpoint.runs.map((r) => r.run.record.metrics));
  assert.equal(await embeddingRequests(), before0 + sent, 'every vector came from <results>/embedding-cache');
  assert.ok(readdirSync(join(there, 'embedding-cache')).length > 0);

  // FORCE: a new record and the vectors asked for again.
  const forced = await evaluatePromptRowsThroughEndpoint({ baseURL: server!.baseURL, model: SERVED_NAME }, rows, { evaluator, experiment: 'route-endpoint', resultsDir: there, force: true });
  assert.notEqual(forced.runs[0].run.record.runId, endpoint.runs[0].run.record.runId);
  assert.ok((await embeddingRequests()) > before0 + sent, 'FORCE embeds again');
});

test('an endpoint serving another model: no run, and why names what it serves and the commands that start the right one', async (t) => {
  if (!ready(t)) return;
  assert.deepEqual(await servedModels(server!.baseURL), [SERVED_NAME]);
  const dir = await tempDir();
  const evaluator = sentevalStsEvaluator({ dataDir: DATA_DIR, pairsPerSet: 2, tasks: ['STSBenchmark'] });
  const r = await evaluatePromptRowsThroughEndpoint({ baseURL: server!.baseURL, model: 'facebook/opt-66b' }, promptEolRows('OPT 66B', optDemonstrationOf('66B')), { evaluator, experiment: 'route-other', resultsDir: dir });
  assert.deepEqual(r.runs, []);
  assert.ok(r.why, 'why is given');
  assert.ok(r.why.includes(`serves '${SERVED_NAME}', not 'facebook/opt-66b'`), r.why);
  assert.ok(r.why.includes('vllm serve facebook/opt-66b ') && r.why.includes('--tensor-parallel-size 2 '), r.why);
  assert.ok(r.why.includes('npm run serve-llm -- --model facebook/opt-66b'), r.why);
  assert.ok(!existsSync(join(dir, 'route-other')), 'no record is written');
});

test('a closed port: no run, why "the endpoint did not answer", naming the URL asked and the refusal', async (t) => {
  if (!DATA_DIR) return t.skip('no data folder (<shared>/data)');
  const port = await closedPort();
  const evaluator = sentevalStsEvaluator({ dataDir: DATA_DIR, pairsPerSet: 2, tasks: ['STSBenchmark'] });
  const dir = await tempDir();
  const r = await evaluatePromptRowsThroughEndpoint({ baseURL: `http://127.0.0.1:${port}/v1`, model: 'facebook/opt-30b' }, promptEolRows('OPT 30B', optDemonstrationOf('30B')), { evaluator, experiment: 'route-closed', resultsDir: dir });
  assert.deepEqual(r.runs, []);
  assert.equal(r.why, `the endpoint did not answer: no answer from http://127.0.0.1:${port}/v1/models: ECONNREFUSED`);
  assert.ok(!existsSync(join(dir, 'route-closed')), 'no record is written');
  await assert.rejects(servedModels('not a url'), (e: Error) => e instanceof UnavailableError && /is not a URL/.test(e.message));
});

test('Table 1 as evaluation rows of a plan, with the smoke routes: the stand-in runs cut to its context and marked, a too-long prompt through the endpoint is a reported failure, and the tables say where and why', async (t) => {
  if (!ready(t)) return;
  const port = await closedPort();
  const evaluator = sentevalStsEvaluator({ dataDir: DATA_DIR, pairsPerSet: PAIRS, tasks: OVERFLOWING_TASKS });
  // Prompts longer than 64 positions, without the demonstration too: the premise of the cut and of the failure below.
  assert.ok(sentencesOf(OVERFLOWING_TASKS, PAIRS).some((s) => promptTokens(s) > 64));
  const models = prompteolTable1Models({ llama: { model: SERVED_NAME, name: 'tiny served', demonstration: DEMONSTRATION } });
  const routed = promptEmbeddingRoutes(models, {
    standIn: OPT_DIR,
    endpoints: { 'facebook/opt-30b': `http://127.0.0.1:${port}/v1`, [SERVED_NAME]: server!.baseURL },
    endpointModels: [SERVED_NAME],
  });
  const dir = await tempDir();
  const plan = await Plan.create(promptEolTable1Rows(routed, evaluator), { experiment: 'route-table1', model: OPT_DIR!, seeds: [42], resultsDir: dir });
  await plan.run();
  const results = promptEolRunResults(plan);
  const of = (model: string) => results.find((r) => r.model === model)!;

  // 125M: the stand-in ran both rows, cut to its 64 positions, and its records say so.
  const r125 = of('facebook/opt-125m');
  assert.equal(r125.why, undefined, r125.why);
  assert.deepEqual(r125.runs.map((r) => r.label), ['PromptEOL OPT 125M', 'PromptEOL+ICL OPT 125M']);
  for (const { run } of r125.runs) {
    assert.equal(run.record.config.sentencesCutToContext, 64);
    assert.match(String(run.record.details?.standIn), /tiny random OPT .* stands in for facebook\/opt-125m/);
    assert.ok(run.record.paper && Object.keys(run.record.paper).includes('test_avg'), "Table 1's cells are copied into the record");
    assert.ok(Number.isFinite(run.record.metrics.test_avg));
  }
  // 350M…13B: skipped (the stand-in ran once); 66B: skipped (no endpoint); 30B: its endpoint is down.
  for (const id of ['facebook/opt-350m', 'facebook/opt-13b']) assert.match(of(id).why ?? '', /stood in once/);
  assert.match(of('facebook/opt-66b').why ?? '', /vllm serve facebook\/opt-66b .*--tensor-parallel-size 2 /);
  assert.match(of('facebook/opt-30b').why ?? '', /^the endpoint did not answer/);
  // The served tiny OPT is not cut (only an in-process stand-in is): the server refuses the prompt
  // longer than its context (HTTP 400, not retried) and the row reports it instead of throwing.
  const served = of(SERVED_NAME);
  assert.deepEqual(served.runs, []);
  assert.match(served.why ?? '', /^the endpoint failed on PromptEOL tiny served: .*HTTP 400 from http:\/\/127\.0\.0\.1:\d+\/v1\/embeddings: the prompt of text \d+ has 6[5-9] tokens, more than the model's context 64/);

  const table = promptRoutesTable(results);
  assert.deepEqual(table.columns, ['model', 'rows', 'embedded', 'why there', 'result']);
  assert.equal(table.rows.length, 9);
  const line = (model: string) => table.rows.find((r) => r[0] === model)!.map(String);
  assert.match(line('facebook/opt-125m')[2], /^in process: .*opt-tiny-seed7.* \(stand-in\)$/);
  assert.equal(line('facebook/opt-125m')[4], `ran: ${r125.runs.map((r) => r.run.record.runId).join(', ')}`);
  assert.equal(line('facebook/opt-30b')[2], `endpoint http://127.0.0.1:${port}/v1`);
  assert.match(line('facebook/opt-30b')[4], /^not run: the endpoint did not answer/);
  assert.match(line('facebook/opt-66b')[4], /^not run: needs an embeddings endpoint .*vllm serve/);
  assert.equal(line('facebook/opt-66b')[3], '');
  assert.match(line(SERVED_NAME)[4], /^not run: the endpoint failed on/);
  // Before running: every routed model 'to run'.
  assert.equal(promptRoutesTable(routed).rows.find((r) => r[0] === 'facebook/opt-125m')![4], 'to run');

  const sources = plan.cellSources('Table 1');
  assert.equal(sources.length, 8 * 2 * 8, 'the OPT rows only (8 sizes × 2 rows × 8 columns); the off-table model has none');
  // The stand-in's cells: its run where the record has the cell's metric (this evaluator runs some of the suite's tasks), else why not.
  for (const s of sources.filter((x) => /OPT 125M$/.test(x.row))) {
    const record = r125.runs.find((r) => r.label === s.row)!.run.record;
    if (typeof record.metrics[s.metric ?? ''] === 'number') assert.deepEqual(s.runs, { runIds: [record.runId] }, `${s.row} ${s.column} has its run`);
    else assert.match(String(s.reason), /not evaluated here/, `${s.row} ${s.column}`);
  }
  assert.ok(sources.some((x) => /OPT 125M$/.test(x.row) && x.column === 'Avg.' && x.runs), 'the average is filled');
  const s66 = sources.find((x) => x.row === 'PromptEOL OPT 66B' && x.column === 'Avg.')!;
  assert.match(String((s66 as { reason?: string }).reason), /^needs an embeddings endpoint/);
  const s30 = sources.find((x) => x.row === 'PromptEOL OPT 30B' && x.column === 'Avg.') as { reason?: string };
  assert.ok(s30.reason && s30.reason.length <= 140 && /did not answer/.test(s30.reason), s30.reason);
  assert.equal(sources.filter((x) => x.column === 'Avg.').length, 16);

  const { improvements, notes } = optIclImprovements(results);
  assert.deepEqual([...improvements.keys()], ['125M']);
  const [plain, icl] = r125.runs.map((r) => r.run.record.metrics.test_avg);
  assert.equal(improvements.get('125M'), icl - plain);
  assert.match(notes.get('125M') ?? '', /stand-in/);
  assert.match(notes.get('66B') ?? '', /needs an embeddings endpoint/);
  assert.match(notes.get('350M') ?? '', /stood in once/);
  assert.equal(notes.size, 8);
});

test('the in-process encoder of the stand-in, without fitToContext, refuses the prompt that fitSentencesToContext cuts (what the cut is for)', async (t) => {
  if (!ready(t)) return;
  const fnwn = loadStsTask('STS13', { dataDir: DATA_DIR, splits: ['test'] }).find((s) => s.name === 'FNWN')!.pairs[1].a;
  const enc = new PromptSentenceEncoder(opt!, { demonstrations: [DEMONSTRATION], prepareText: 'prompteol' });
  await assert.rejects(enc.encode([fnwn]), (e: Error) => e instanceof InputError && /more than the model's context 64/.test(e.message));
});
