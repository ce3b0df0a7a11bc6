/**
 * PromptEOL's in-context demonstration search (lib/experiments/icl-demonstration-search.ts), its
 * candidate sets (lib/llm/demonstration-set.ts, lib/llm/one-word-labels.ts,
 * lib/experiments/icl-demonstration-sets.ts), its tables and its Figure 3
 * (lib/experiments/icl-search-report.ts), on the golden tiny OPT
 * (64 positions: sentences are cut to fit) over the first STS-B dev pairs; one-word labels and
 * embeddings asked of the same model through our chat server on 127.0.0.1 (no stub).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { initBackend } from '../lib/backend/index.js';
import { loadStsBenchmark } from '../lib/data/sts.js';
import { PromptSentenceEncoder, type Demonstration } from '../lib/embed/prompt-encoder.js';
import { spearman } from '../lib/eval/spearman.js';
import { searchIclDemonstrations, stsbDevEvaluator, type IclSearchResult } from '../lib/experiments/icl-demonstration-search.js';
import { Plan, type PlanRow } from '../lib/experiments/plan.js';
import { IclSearchEvaluation, iclSearchesOf, type RoutedPromptModel } from '../lib/experiments/prompt-evaluation-rows.js';
import { iclCandidatesTable, iclSearchFigure, iclSearchTable } from '../lib/experiments/icl-search-report.js';
import { labelStsbTrainDemonstrations, oneWordLabelsTable, stsbTrainSentences, table4DemonstrationSet } from '../lib/experiments/icl-demonstration-sets.js';
import { fitSentencesToContext } from '../lib/experiments/prompt-evaluations.js';
import { prompteolTable1Models } from '../lib/experiments/tables/prompteol.js';
import { readRehearsalSummary } from '../lib/experiments/rehearsal/summary.js';
import { readAuthorsIclExamples, readDemonstrationFile, readDemonstrationsJsonl, writeDemonstrationsJsonl, type DemonstrationCandidate } from '../lib/llm/demonstration-set.js';
import { DecoderEmbeddingModel } from '../lib/embed/decoder-embedding-model.js';
import { LocalChatGenerator } from '../lib/llm/local-generator.js';
import { oneWordRequests, parseOneWordAnswer } from '../lib/llm/one-word-labels.js';
import { OpenAIChatClient } from '../lib/llm/openai-client.js';
import { startChatServer } from '../lib/llm/server.js';
import { loadModel } from '../lib/models/auto.js';
import type { LoadedModel } from '../lib/models/types.js';
import { isEmptyFigure } from '../lib/report/figures/figure.js';
import { DATA_DIR, SHARED_DIR } from './helpers/env.js';

const OPT_DIR = SHARED_DIR ? join(SHARED_DIR, 'golden', 'opt-tiny-seed7', 'model') : undefined;
const PAIRS = 12;

let tmp: string;
let opt: LoadedModel | undefined;

before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'icl-search-'));
  await initBackend('cpu', { quiet: true });
  if (OPT_DIR && existsSync(OPT_DIR)) opt = await loadModel(OPT_DIR);
});
after(() => {
  opt?.model.dispose();
  rmSync(tmp, { recursive: true, force: true });
});

function cosine(a: Float32Array, b: Float32Array): number {
  let ab = 0;
  let aa = 0;
  let bb = 0;
  for (let i = 0; i < a.length; i++) {
    ab += a[i]! * b[i]!;
    aa += a[i]! * a[i]!;
    bb += b[i]! * b[i]!;
  }
  return ab / Math.sqrt(aa * bb);
}

/** ρ × 100 on the first PAIRS STS-B dev pairs, computed here from the encoder's vectors (no evaluator, no run store). */
async function directSpearman(m: LoadedModel, demonstrations: Demonstration[]): Promise<number> {
  const pairs = loadStsBenchmark('dev', { dataDir: DATA_DIR }).pairs.slice(0, PAIRS);
  const prompt = { demonstrations, prepareText: 'prompteol' as const };
  const fit = fitSentencesToContext(m, prompt);
  const enc = new PromptSentenceEncoder(m, prompt);
  const a = await enc.encode(pairs.map((p) => fit(p.a)));
  const b = await enc.encode(pairs.map((p) => fit(p.b)));
  const cos = pairs.map((_, i) => cosine(a.data.subarray(i * a.dim, (i + 1) * a.dim), b.data.subarray(i * b.dim, (i + 1) * b.dim)));
  return 100 * spearman(cos, pairs.map((p) => p.score));
}

const recordFiles = (experiment: string) => readdirSync(join(tmp, experiment)).filter((f) => f.endsWith('.json') && !f.endsWith('.predictions.json'));

/** A demonstration that alone outgrows the tiny OPT's 64 positions. */
const TOO_LONG: DemonstrationCandidate = { demonstration: { text: Array.from({ length: 60 }, (_, i) => `word${i}`).join(' '), word: 'Long' }, source: 'test: too long' };

/** A demonstration that fits the tiny OPT's context but leaves no room for any sentence: every prompt would be the same. */
function noRoomFor(m: LoadedModel): DemonstrationCandidate {
  const texts = loadStsBenchmark('dev', { dataDir: DATA_DIR }).pairs.slice(0, PAIRS).flatMap((p) => [p.a, p.b]);
  // " a" is one token of GPT-2's BPE: the demonstration grows a token at a time up to the context.
  for (let k = 1; k < 64; k++) {
    const demonstration = { text: Array.from({ length: k }, () => 'a').join(' '), word: 'Full' };
    let fit: (t: string) => string;
    try {
      fit = fitSentencesToContext(m, { demonstrations: [demonstration], prepareText: 'prompteol' });
    } catch {
      break;
    }
    if (texts.every((t) => fit(t) === '')) return { demonstration, source: 'test: no room' };
  }
  throw new Error('no demonstration leaves the tiny OPT without room for a sentence');
}

let searched: IclSearchResult | undefined;

test('the search: each candidate’s Spearman equals that demonstration evaluated directly; best is the argmax; a rerun reuses every record and resumes a larger set', async (t) => {
  if (!opt || !DATA_DIR) return t.skip('no golden tiny OPT (shared/golden/opt-tiny-seed7) or no data folder');
  const set = table4DemonstrationSet();
  assert.equal(set.length, 8);
  const candidates = [set[0]!, set[2]!, TOO_LONG, set[3]!, noRoomFor(opt)];
  const o = { experiment: 'icl', resultsDir: tmp, dataDir: DATA_DIR, pairs: PAIRS, fitToContext: true, standIn: 'the tiny OPT (test)', label: 'tiny OPT' };
  const lines: string[] = [];

  // A first, smaller search: the plain template and two candidates.
  const first = await searchIclDemonstrations({ id: OPT_DIR!, loaded: opt }, candidates.slice(0, 2), { ...o, log: (l) => lines.push(l) });
  assert.equal(first.kind, 'searched');
  assert.equal(recordFiles('icl').length, 3);
  assert.ok(lines.some((l) => /tiny OPT: candidates 2\/2 \(100%\)/.test(l)), lines.join('\n'));

  // The whole set: what finished is reused, the rest evaluated; the too-long demonstration is skipped.
  const r = await searchIclDemonstrations({ id: OPT_DIR!, loaded: opt }, candidates, o);
  assert.equal(r.kind, 'searched');
  const s = r as IclSearchResult;
  searched = s;
  assert.equal(s.evaluator.name, stsbDevEvaluator({ dataDir: DATA_DIR, pairs: PAIRS }).name);
  assert.equal(s.evaluator.rows, PAIRS);
  assert.equal(s.baseline.status, 'reused');
  assert.deepEqual(s.scores.map((x) => [x.index, x.status]), [[0, 'reused'], [1, 'reused'], [3, 'evaluated']]);
  assert.deepEqual(s.skipped.map((k) => k.index), [2, 4]);
  assert.match(s.skipped[0]!.why, /the prompt template alone has \d+ tokens, the model's context 64: no sentence fits/);
  assert.match(s.skipped[1]!.why, /every STS-B dev sentence is cut away to fit the model's 64 positions/);
  assert.equal(recordFiles('icl').length, 4);

  const baseline = await directSpearman(opt, []);
  assert.ok(Math.abs(s.baseline.spearman - baseline) < 1e-9, `baseline ${s.baseline.spearman} vs ${baseline}`);
  const direct: number[] = [];
  for (const x of s.scores) {
    const d = await directSpearman(opt, [x.candidate.demonstration]);
    direct.push(d);
    assert.ok(Math.abs(x.spearman - d) < 1e-9, `${x.candidate.source}: ${x.spearman} vs ${d}`);
  }
  // The demonstrations change the numbers (else this test could not tell them apart).
  assert.ok(new Set(direct.map((d) => d.toFixed(9))).size === direct.length, `distinct: ${direct}`);
  const best = direct.indexOf(Math.max(...direct));
  assert.equal(s.best!.index, s.scores[best]!.index);
  assert.equal(s.fractionBelowBaseline, direct.filter((d) => d < baseline).length / direct.length);

  // Every record says what it is: the model, the candidate and where it comes from, the stand-in.
  const rec = JSON.parse(readFileSync(join(tmp, 'icl', `${s.scores[0]!.runId}.json`), 'utf8')) as { config: { demonstrations: Demonstration[]; sentencesCutToContext: number }; details: { iclSearch: { model: string; candidate: number; source: string }; standIn: string } };
  assert.deepEqual(rec.config.demonstrations, [set[0]!.demonstration]);
  assert.equal(rec.config.sentencesCutToContext, 64);
  assert.deepEqual(rec.details.iclSearch, { model: 'tiny OPT', candidate: 0, source: 'PromptEOL Table 4 (OPT 125M)' });
  assert.equal(rec.details.standIn, 'the tiny OPT (test)');

  // Again: nothing evaluated, nothing written.
  const again = (await searchIclDemonstrations({ id: OPT_DIR!, loaded: opt }, candidates, o)) as IclSearchResult;
  assert.deepEqual(again.scores.map((x) => x.status), ['reused', 'reused', 'reused']);
  assert.deepEqual(again.scores.map((x) => x.runId), s.scores.map((x) => x.runId));
  assert.equal(again.baseline.runId, s.baseline.runId);
  assert.equal(recordFiles('icl').length, 4);
  // force: every evaluation again, the same numbers, new records.
  const forced = (await searchIclDemonstrations({ id: OPT_DIR!, loaded: opt }, candidates.slice(0, 1), { ...o, force: true })) as IclSearchResult;
  assert.equal(forced.scores[0]!.status, 'evaluated');
  assert.notEqual(forced.scores[0]!.runId, s.scores[0]!.runId);
  assert.ok(Math.abs(forced.scores[0]!.spearman - s.scores[0]!.spearman) < 1e-9);
  assert.equal(recordFiles('icl').length, 6);
});

test('the search table, the candidates table and Figure 3 show what the search found', (t) => {
  if (!searched) return t.skip('the search did not run');
  const s = searched;
  const paper = s.scores[1]!.candidate.demonstration;
  const table = iclSearchTable([{ search: s, demonstration: paper }, { kind: 'not-run', label: 'OPT 66B', model: 'facebook/opt-66b', why: 'no endpoint' }]);
  const row = table.rows[0]!;
  const col = (name: string) => row[table.columns.indexOf(name)];
  assert.equal(col('candidates'), 3);
  assert.equal(col('no demonstration'), s.baseline.spearman.toFixed(2));
  assert.equal(col('best'), s.best!.spearman.toFixed(2));
  assert.equal(col('below no demonstration'), `${(100 * s.fractionBelowBaseline!).toFixed(0)}%`);
  const rank = [...s.scores].sort((a, b) => b.spearman - a.spearman).findIndex((x) => x.index === s.scores[1]!.index) + 1;
  assert.match(String(col("Table 4's demonstration")), new RegExp(`\\(rank ${rank} of 3\\)$`));
  assert.match(String(col('note')), /2 skipped/);
  assert.equal(table.rows[1]![table.columns.indexOf('note')], 'not run: no endpoint');

  const ranked = iclCandidatesTable(s);
  assert.deepEqual(ranked.rows.map((r) => r[1]), [...s.scores].sort((a, b) => b.spearman - a.spearman).map((x) => x.spearman.toFixed(2)));
  assert.equal(ranked.rows[0]![4], s.best!.candidate.demonstration.word);

  const fig = iclSearchFigure([s, { kind: 'not-run', label: 'x', model: 'x', why: 'x' }]);
  const ticks = fig.data.find((d) => d.name === 'demonstrations')!;
  assert.deepEqual(ticks.x, s.scores.map((x) => x.spearman));
  const line = fig.data.find((d) => d.name === 'no demonstration')!;
  assert.deepEqual(line.x, [s.baseline.spearman, s.baseline.spearman]);
  const below = s.scores.filter((x) => x.spearman < s.baseline.spearman).length;
  assert.match(fig.layout.annotations![0]!.text, new RegExp(`${Math.round((100 * below) / 3)}% below \\(3\\)`));
  // The density below the line stays left of it.
  const blue = fig.data.find((d) => d.name === 'below no demonstration');
  if (blue) assert.ok((blue.x as number[]).every((x) => x <= s.baseline.spearman));
  assert.ok(isEmptyFigure(iclSearchFigure([{ kind: 'not-run', label: 'x', model: 'x', why: 'x' }])));
});

test('demonstration files: JSON lines round-trip; every bad line is named by file:line and what was expected; the authors’ icl_examples.txt layout', async () => {
  const file = join(tmp, 'set.jsonl');
  const pairs: Demonstration[] = [
    { text: 'A jockey riding a horse.', word: 'Equestrian' },
    { text: 'meat from a deer.', word: 'Venison' },
  ];
  await writeDemonstrationsJsonl(file, pairs);
  assert.equal(readFileSync(file, 'utf8'), '{"sentence":"A jockey riding a horse.","word":"Equestrian"}\n{"sentence":"meat from a deer.","word":"Venison"}\n');
  assert.deepEqual(readDemonstrationsJsonl(file), pairs.map((d, i) => ({ demonstration: d, source: `set.jsonl:${i + 1}` })));
  assert.deepEqual(readDemonstrationFile(file).map((c) => c.demonstration), pairs);

  const bad = (name: string, text: string) => {
    const f = join(tmp, name);
    writeFileSync(f, text);
    return f;
  };
  const cases: Array<[string, string, RegExp]> = [
    ['not-json.jsonl', '{"sentence":"a","word":"b"}\n\n{"sentence": "c", word: "d"}\n', /not-json\.jsonl:3: not JSON .*expected one JSON object a line/],
    ['no-word.jsonl', '{"sentence":"a","word":"b"}\n{"sentence":"c"}\n', /no-word\.jsonl:2: "word" is missing: expected one JSON object a line: \{"sentence"/],
    ['number.jsonl', '{"sentence":"a","word":7}\n', /number\.jsonl:1: "word" is 7 \(number\)/],
    ['empty-sentence.jsonl', '{"sentence":"  ","word":"b"}\n', /empty-sentence\.jsonl:1: "sentence" is empty/],
    ['list.jsonl', '["a","b"]\n', /list\.jsonl:1: a list, not an object/],
    ['blank.jsonl', '\n \n', /blank\.jsonl:1: empty file \(only whitespace\)/],
    ['twice.jsonl', '{"sentence":"a","word":"b"}\n{"sentence":"c","word":"d"}\n{"sentence":"a","word":"b"}\n', /twice\.jsonl:3: the demonstration "a" → "b" is also on line 1/],
  ];
  for (const [name, text, re] of cases) assert.throws(() => readDemonstrationsJsonl(bad(name, text)), re, name);
  assert.throws(() => readDemonstrationsJsonl(join(tmp, 'absent.jsonl')), /absent\.jsonl: missing file/);

  // The authors' layout (the lines of run_icl.sh): `_` for spaces, the input's template after the demonstration.
  const authors = bad(
    'icl_examples.txt',
    'This_sentence_:_"A_man_is_smoking."_means_in_one_word:"Smoking".This_sentence_:_"*sent_0*"_means_in_one_word:"\n' +
      'This_sentence_:_"of_or_relating_to_tutors_or_tutoring."_means_in_one_word:"Tutorial".This_sentence_:_"*sent_0*"_means_in_one_word:"\n',
  );
  assert.deepEqual(readAuthorsIclExamples(authors), [
    { demonstration: { text: 'A man is smoking.', word: 'Smoking' }, source: 'icl_examples.txt:1' },
    { demonstration: { text: 'of or relating to tutors or tutoring.', word: 'Tutorial' }, source: 'icl_examples.txt:2' },
  ]);
  assert.equal(readDemonstrationFile(authors).length, 2);
  const broken = bad('broken.txt', 'This_sentence_:_"A_man_is_smoking."_means_in_one_word:"Smoking".This_sentence_:_"*sent_0*"_means_in_one_word:"\nThis_sentence_:_"x"_means:"y"\n');
  assert.throws(() => readAuthorsIclExamples(broken), /broken\.txt:2: not an in-context template: expected This_sentence_:_"<sentence>"/);
  assert.throws(() => readDemonstrationFile(bad('other.txt', 'hello\n')), /other\.txt:1: not a demonstration set: expected a \.jsonl file/);
});

test('one-word answers: the word, or why there is none', () => {
  const cases: Array<[string, string]> = [
    ['Equestrian".', 'Equestrian'],
    ['"Music"', 'Music'],
    [' Horseback-riding".This sentence', 'Horseback-riding'],
    ['Swiss.\nThe sentence is about', 'Swiss'],
    [' said Tom.\nTom and Dad', 'more than one word'],
    [':" surgeries Please', 'empty'],
    ['', 'empty'],
    ['**Music**', 'not a word'],
    ['plug'.repeat(16), 'too long for a word'],
  ];
  for (const [answer, expected] of cases) {
    const p = parseOneWordAnswer(answer);
    assert.equal('word' in p ? p.word : p.reason, expected, JSON.stringify(answer));
  }
  assert.throws(() => oneWordRequests(['a', 'b', 'a']), /sentences 0 and 2 are the same/);
  assert.equal(oneWordRequests(['A man is smoking.'])[0]!.messages[0]!.content, 'This sentence : "A man is smoking." means in one word:"');
});

test('STS-B train sentences labelled through a real local chat server: the pairs the parse gives, written as JSON lines and read back; a rerun asks nothing; the set runs in the search', async (t) => {
  if (!opt || !DATA_DIR) return t.skip('no golden tiny OPT (shared/golden/opt-tiny-seed7) or no data folder');
  const local = new LocalChatGenerator({ model: opt.model as never, tokenizer: opt.tokenizer, dir: opt.dir, id: 'tiny-opt' }, { modelName: 'tiny-opt' });
  const requests: string[] = [];
  const server = await startChatServer({ generator: local, port: 0, log: (l) => requests.push(l) });
  try {
    const client = new OpenAIChatClient({ baseURL: server.baseURL, model: 'tiny-opt', env: {} });
    const sentences = stsbTrainSentences({ dataDir: DATA_DIR, count: 4, seed: 3 });
    assert.equal(new Set(sentences).size, 4);
    assert.deepEqual(stsbTrainSentences({ dataDir: DATA_DIR, count: 4, seed: 3 }), sentences);
    const o = { dataDir: DATA_DIR, count: 4, seed: 3, cacheDir: join(tmp, 'llm-cache'), concurrency: 2 };
    // What the same decoder answers in this process, parsed: the labels the server's answers must give.
    const expected = async (max_tokens: number) => {
      const answers = await Promise.all(oneWordRequests(sentences, { max_tokens }).map((r) => local.complete(r)));
      return answers.map((a) => parseOneWordAnswer(a.text));
    };

    // One token: the model's first word (or not a word).
    const one = await labelStsbTrainDemonstrations(client, { ...o, max_tokens: 1, out: join(tmp, 'labels-1.jsonl') });
    const want1 = await expected(1);
    assert.ok(want1.some((p) => 'word' in p), 'the model gave no word at all');
    assert.deepEqual(one.labelling.labels.map((l) => [l.sentence, l.word]), sentences.flatMap((s, i) => ('word' in want1[i]! ? [[s, (want1[i] as { word: string }).word]] : [])));
    assert.equal(one.file, join(tmp, 'labels-1.jsonl'));
    assert.deepEqual(one.candidates, readDemonstrationsJsonl(one.file!));
    assert.deepEqual(one.candidates.map((c) => c.demonstration), one.labelling.labels.map((l) => ({ text: l.sentence, word: l.word })));
    assert.equal(requests.filter((l) => l.startsWith('POST /v1/chat/completions')).length, 4);
    assert.equal(one.labelling.usage.paid.requests, 4);

    // Again: every answer from the cache, no request.
    const again = await labelStsbTrainDemonstrations(client, { ...o, max_tokens: 1, out: join(tmp, 'labels-1.jsonl') });
    assert.deepEqual(again.labelling.labels, one.labelling.labels);
    assert.deepEqual([again.labelling.usage.paid.requests, again.labelling.usage.cached.requests], [0, 4]);
    assert.equal(requests.filter((l) => l.startsWith('POST /v1/chat/completions')).length, 4);

    // Four tokens: a random model's answers are rarely one word; every rejected answer is listed with its reason.
    const long = await labelStsbTrainDemonstrations(client, { ...o, max_tokens: 4, out: join(tmp, 'labels-4.jsonl') });
    const want4 = await expected(4);
    assert.deepEqual(long.labelling.rejects.map((x) => x.reason), want4.filter((p) => 'reason' in p).map((p) => (p as { reason: string }).reason));
    assert.ok(long.labelling.rejects.length > 0);
    assert.equal(long.labelling.labels.length + long.labelling.rejects.length, 4);
    assert.equal(existsSync(join(tmp, 'labels-4.jsonl')), long.labelling.labels.length > 0);
    const shown = oneWordLabelsTable(long.labelling);
    assert.deepEqual(shown.rows.map((r) => r[3]), [...long.labelling.labels.map(() => 'labelled'), ...long.labelling.rejects.map((x) => `rejected: ${x.reason}`)]);

    // The labelled set goes into the search as any other.
    const r = (await searchIclDemonstrations({ id: OPT_DIR!, loaded: opt }, one.candidates, { experiment: 'icl-labelled', resultsDir: tmp, dataDir: DATA_DIR, pairs: PAIRS, fitToContext: true })) as IclSearchResult;
    assert.equal(r.scores.length + r.skipped.length, one.candidates.length);
    assert.deepEqual(r.scores.map((x) => x.candidate.source), one.candidates.filter((_, i) => !r.skipped.some((k) => k.index === i)).map((c) => c.source));
  } finally {
    await server.close();
  }
});

test('the search through an OpenAI-compatible /v1/embeddings (our server on 127.0.0.1) gives the in-process numbers; an endpoint serving another model is not searched, and says why', async (t) => {
  if (!opt || !DATA_DIR) return t.skip('no golden tiny OPT (shared/golden/opt-tiny-seed7) or no data folder');
  const local = new LocalChatGenerator({ model: opt.model as never, tokenizer: opt.tokenizer, dir: opt.dir, id: 'tiny-opt' }, { modelName: 'tiny-opt' });
  const server = await startChatServer({ generator: local, port: 0, embeddings: new DecoderEmbeddingModel({ model: opt.model, tokenizer: opt.tokenizer }) });
  try {
    // Every prompt of the first PAIRS pairs fits the tiny OPT's 64 positions (at most 43 tokens with these demonstrations): nothing is cut on either side.
    const candidates = table4DemonstrationSet().slice(0, 2);
    const o = { resultsDir: tmp, dataDir: DATA_DIR, pairs: PAIRS, label: 'tiny OPT' };
    const here = (await searchIclDemonstrations({ id: OPT_DIR!, loaded: opt }, candidates, { ...o, experiment: 'icl-here' })) as IclSearchResult;
    const there = (await searchIclDemonstrations({ id: 'tiny-opt', endpoint: server.baseURL }, candidates, { ...o, experiment: 'icl-endpoint' })) as IclSearchResult;
    assert.equal(here.kind, 'searched');
    assert.equal(there.kind, 'searched', JSON.stringify(there));
    // The engine's float32 vectors equal ours to about 1e-5 (test/llm-embeddings.test.ts): the same ranks, the same ρ.
    assert.ok(Math.abs(there.baseline.spearman - here.baseline.spearman) < 1e-6, `${there.baseline.spearman} vs ${here.baseline.spearman}`);
    there.scores.forEach((x, i) => assert.ok(Math.abs(x.spearman - here.scores[i]!.spearman) < 1e-6, `${x.spearman} vs ${here.scores[i]!.spearman}`));
    const rec = JSON.parse(readFileSync(join(tmp, 'icl-endpoint', `${there.scores[0]!.runId}.json`), 'utf8')) as { model: { weightsSha256?: string }; details: { servedModel: string }; config: { embeddedBy: string } };
    assert.equal(rec.details.servedModel, 'tiny-opt');
    assert.match(rec.config.embeddedBy, /\/v1\/embeddings endpoint/);
    const wrong = await searchIclDemonstrations({ id: 'facebook/opt-66b', endpoint: server.baseURL }, candidates, { ...o, experiment: 'icl-endpoint' });
    assert.equal(wrong.kind, 'not-run');
    assert.match((wrong as { why: string }).why, /serves 'tiny-opt', not 'facebook\/opt-66b'/);
  } finally {
    await server.close();
  }
});

test('under the rehearsal preset the plan rehearses a search row at its shapes: the dev sentences behind the longest demonstration, counted once per candidate and once plain; an endpoint\'s model is not rehearsed', async (t) => {
  if (!OPT_DIR || !existsSync(OPT_DIR) || !DATA_DIR) return t.skip('no golden tiny OPT (shared/golden/opt-tiny-seed7) or no data folder');
  // The plan decides from its preset alone: no ANGLE_PRESET is set here.
  assert.notEqual(process.env.ANGLE_PRESET, 'rehearsal');
  const set = table4DemonstrationSet();
  const [opt125, opt350] = prompteolTable1Models();
  const search = (m: RoutedPromptModel): PlanRow => {
    const evaluation = new IclSearchEvaluation(m, set, { experiment: 'icl-rehearsal', pairs: PAIRS, rehearsalCandidates: 300 });
    return { row: `${evaluation.label}: demonstration search`, table: 'Figure 3', cells: [], offTable: true, evaluation };
  };
  const rows = [search({ ...opt125!, route: { kind: 'in-process', model: OPT_DIR, why: 'test' } }), search({ ...opt350!, route: { kind: 'endpoint', baseURL: 'http://127.0.0.1:9/v1', model: 'facebook/opt-350m', why: 'test' } })];
  const plan = await Plan.create(rows, { experiment: '09-test', model: OPT_DIR, preset: 'rehearsal', seeds: [42], resultsDir: tmp, dataDir: DATA_DIR });
  await plan.run();
  const [here, served] = iclSearchesOf(plan);
  assert.equal(here!.search.kind, 'rehearsed');
  const row = (here!.search as { row: { status: string; data: string; notebook: string; run: string } }).row;
  assert.equal(row.status, 'ok', JSON.stringify(row));
  const texts = new Set(loadStsBenchmark('dev', { dataDir: DATA_DIR }).pairs.slice(0, PAIRS).flatMap((p) => [p.a, p.b])).size;
  assert.equal(row.data, `${texts} texts × 301`);
  assert.equal(row.notebook, '09-test');
  assert.ok(readRehearsalSummary(tmp).rows.some((x) => x.run === row.run && x.notebook === '09-test'));
  assert.deepEqual(plan.rehearsalTable().rows.length, 1, 'the one rehearsed row is in the plan\'s rehearsal table');
  assert.equal(served!.search.kind, 'not-run');
  assert.match((served!.search as { why: string }).why, /serving engine/);
  // Nothing evaluated: no record.
  assert.ok(!existsSync(join(tmp, 'icl-rehearsal')) || recordFiles('icl-rehearsal').length === 0);
});
