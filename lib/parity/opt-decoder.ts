/**
 * OPT decoder parity against a golden set of the `opt-golden-v1` layout
 * (../shared/golden/opt-tiny-seed7/README.md): `golden.json` (HF modeling_opt.py semantics, computed
 * by a line-by-line fp32 PyTorch transcription), `golden.safetensors` (full-vocabulary logits
 * rows) and the set's own `model/` folder, loaded through loadModel as any OPT directory is.
 * Everything — sizes, texts, template, sampled vocabulary ids, layer count — is read from the set,
 * so another set of this layout (other seed, post-LN, project_in/project_out) is checked the same way:
 *
 * - the config as the model parsed it equals golden.json's;
 * - per case: token ids (the tokenizer, BOS from config.json), position ids, every hidden state,
 *   last_hidden_state and the PromptEOL embedding (last token), logits at the sampled ids and
 *   the full rows, their argmax (identical), max and logsumexp;
 * - the batch, padded left and right with pad_token_id: input ids and mask as the tokenizer pads
 *   them, then the same tensors compared only where attention_mask is 1 (the README's convention
 *   8: padding positions are undefined), the sentence embedding at each row's last real token,
 *   and the project's PromptEOL encoder (left padding, last-token pooling) on the batch's texts;
 * - greedy generation of each prompt alone and of all prompts in one left-padded batch (KV cache):
 *   new ids identical, new text identical.
 *
 * Tolerances (the README's): logits and their statistics 1e-4 absolute; hidden states and
 * embeddings 1e-5, scaled by the reference tensor's magnitude where it exceeds 1 (fp32 rounding
 * grows with it), so a set with larger activations is held to the same relative accuracy. The
 * golden's own fp32-vs-float64 error is about 1e-6.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tf } from '../backend/index.js';
import { PromptSentenceEncoder } from '../embed/prompt-encoder.js';
import { loadModel } from '../models/auto.js';
import { generate } from '../models/llama/generate.js';
import { optPositionIds, OptModel } from '../models/opt/model.js';
import { readSafetensors } from '../models/safetensors.js';
import type { TextTokenizer } from '../models/types.js';
import { InputError } from '../util/errors.js';
import { check, maxAbsDiff, type ParityCheck } from './check.js';

/** golden.json `format` of this layout. */
export const OPT_GOLDEN_FORMAT = 'opt-golden-v1';
export const OPT_HIDDEN_TOLERANCE = 1e-5;
export const OPT_LOGITS_TOLERANCE = 1e-4;

type Matrix = number[][];

interface LogitStats {
  logits_argmax: number[];
  logits_max: number[];
  logits_logsumexp: number[];
  logits_sampled: Matrix;
  logits_full_rows: number[];
}

interface SingleCase extends LogitStats {
  name: string;
  input_text: string;
  ids: number[];
  position_ids: number[];
  hidden_states: Matrix[];
  last_hidden_state: Matrix;
  sentence_embedding: number[];
}

interface BatchSide {
  input_ids: Matrix;
  attention_mask: Matrix;
  position_ids: Matrix;
  last_token_index: number[];
  hidden_states: Matrix[][];
  last_hidden_state: Matrix[];
  sentence_embedding: Matrix;
  logits_full_rows: number[];
  logits_argmax: Matrix;
  logits_max: Matrix;
  logits_logsumexp: Matrix;
  logits_sampled: Matrix[];
}

interface BatchCase {
  name: string;
  kind: 'batch';
  texts: string[];
  input_texts: string[];
  ids_unpadded: Matrix;
  left: BatchSide;
  right: BatchSide;
}

interface GreedyCase {
  prompt: string;
  ids: number[];
  new_ids: number[];
  new_text: string;
}

interface OptGolden {
  format: string;
  config: Record<string, unknown>;
  prompteol_template: string;
  logit_sample_ids: number[];
  cases: Array<SingleCase | BatchCase>;
  greedy: GreedyCase[];
}

/** Whether a parsed golden.json is of this layout (lib/parity/suites.ts picks the decoder suite by it). */
export function isOptGoldenHead(head: Record<string, unknown>): boolean {
  return head.format === OPT_GOLDEN_FORMAT;
}

function readGolden(path: string): OptGolden {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new InputError(`cannot read the OPT golden file: ${(e as Error).message}`, { file: path });
  }
  const g = raw as OptGolden;
  if (!g || g.format !== OPT_GOLDEN_FORMAT) throw new InputError(`expected format '${OPT_GOLDEN_FORMAT}'`, { file: path });
  for (const k of ['config', 'prompteol_template', 'logit_sample_ids', 'cases', 'greedy'] as const) {
    if (g[k] === undefined) throw new InputError(`missing field '${k}'`, { file: path });
  }
  if (!Array.isArray(g.cases) || !g.cases.some((c) => (c as BatchCase).kind === 'batch')) throw new InputError("'cases' must hold the single cases and one 'batch' case", { file: path });
  return g;
}

/** Tolerance scaled by the reference's magnitude when it exceeds 1. */
function scaled(tol: number, ref: ArrayLike<number>): number {
  let m = 1;
  for (let i = 0; i < ref.length; i++) m = Math.max(m, Math.abs(ref[i]));
  return tol * m;
}

/** Within `tol` absolutely; hidden states (`relative`) within tol × their magnitude where it exceeds 1. */
function closeTo(name: string, got: ArrayLike<number>, want: ArrayLike<number>, tol: number, relative = tol === OPT_HIDDEN_TOLERANCE): ParityCheck {
  if (got.length !== want.length) return { name, ok: false, detail: `${got.length} values, golden has ${want.length}` };
  return check(name, maxAbsDiff(got, want), relative ? scaled(tol, want) : tol);
}

function sameInts(name: string, got: ArrayLike<number>, want: ArrayLike<number>): ParityCheck {
  const n = Math.max(got.length, want.length);
  for (let i = 0; i < n; i++) {
    if (got[i] !== want[i]) return { name, ok: false, detail: `first difference at index ${i}: got ${got[i]}, want ${want[i]} (lengths ${got.length} vs ${want.length})` };
  }
  return { name, ok: true, detail: `identical (${want.length} values)` };
}

function sameText(name: string, got: string, want: string): ParityCheck {
  if (got === want) return { name, ok: true, detail: `identical (${want.length} characters)` };
  let i = 0;
  while (i < got.length && got[i] === want[i]) i++;
  return { name, ok: false, detail: `differs at character ${i}: got ${JSON.stringify(got.slice(i, i + 20))}, want ${JSON.stringify(want.slice(i, i + 20))}` };
}

/** Rows `rows` of a row-major [n, width] array, concatenated. */
function pickRows(data: Float32Array, width: number, rows: readonly number[]): Float32Array {
  const out = new Float32Array(rows.length * width);
  rows.forEach((r, i) => out.set(data.subarray(r * width, (r + 1) * width), i * width));
  return out;
}

/** Per row of logits [n, V]: argmax (first on ties), max and logsumexp (in float64). */
function logitStats(logits: Float32Array, V: number, rows: readonly number[]): { argmax: number[]; max: number[]; lse: number[] } {
  const argmax: number[] = [];
  const max: number[] = [];
  const lse: number[] = [];
  for (const r of rows) {
    const z = logits.subarray(r * V, (r + 1) * V);
    let best = 0;
    for (let j = 1; j < V; j++) if (z[j] > z[best]) best = j;
    let s = 0;
    for (let j = 0; j < V; j++) s += Math.exp(z[j] - z[best]);
    argmax.push(best);
    max.push(z[best]);
    lse.push(z[best] + Math.log(s));
  }
  return { argmax, max, lse };
}

/**
 * The logit checks of one sequence: `rows` are the positions compared (real tokens), `want*`
 * the golden values at those positions, `fullRows` positions whose whole row is in golden.safetensors.
 */
function logitChecks(
  name: string,
  logits: Float32Array,
  V: number,
  rows: readonly number[],
  sampleIds: readonly number[],
  want: { argmax: number[]; max: number[]; lse: number[]; sampled: Matrix },
  full?: { rows: readonly number[]; data: Float32Array },
): ParityCheck[] {
  const stats = logitStats(logits, V, rows);
  const sampled = new Float32Array(rows.length * sampleIds.length);
  rows.forEach((r, i) => sampleIds.forEach((id, j) => (sampled[i * sampleIds.length + j] = logits[r * V + id])));
  const out = [
    closeTo(`${name}/logits_sampled`, sampled, want.sampled.flat(), OPT_LOGITS_TOLERANCE),
    sameInts(`${name}/logits_argmax`, stats.argmax, want.argmax),
    closeTo(`${name}/logits_max`, stats.max, want.max, OPT_LOGITS_TOLERANCE),
    closeTo(`${name}/logits_logsumexp`, stats.lse, want.lse, OPT_LOGITS_TOLERANCE),
  ];
  if (full) out.push(closeTo(`${name}/logits_full_rows`, pickRows(logits, V, full.rows), full.data, OPT_LOGITS_TOLERANCE));
  return out;
}

/** The model's parsed config against golden.json's config keys that fix the computation. */
function configCheck(model: OptModel, golden: Record<string, unknown>): ParityCheck {
  const c = model.config;
  const want: Array<[string, unknown, unknown]> = [
    ['vocab_size', golden.vocab_size, c.vocabSize],
    ['hidden_size', golden.hidden_size, c.hiddenSize],
    ['num_hidden_layers', golden.num_hidden_layers, c.numLayers],
    ['num_attention_heads', golden.num_attention_heads, c.numHeads],
    ['ffn_dim', golden.ffn_dim, c.ffnDim],
    ['word_embed_proj_dim', golden.word_embed_proj_dim ?? golden.hidden_size, c.wordEmbedProjDim],
    ['max_position_embeddings', golden.max_position_embeddings, c.maxPositions],
    ['do_layer_norm_before', golden.do_layer_norm_before ?? true, c.doLayerNormBefore],
    ['bos_token_id', golden.bos_token_id, c.bosTokenId],
    ['pad_token_id', golden.pad_token_id, c.padTokenId],
  ];
  const bad = want.filter(([, g, m]) => g !== m);
  return {
    name: 'opt/config',
    ok: bad.length === 0,
    detail: bad.length === 0 ? `model config equals golden config (${c.doLayerNormBefore ? 'pre' : 'post'}-LN, ${c.wordEmbedProjDim !== c.hiddenSize ? 'with' : 'no'} project_in/out)` : bad.map(([k, g, m]) => `${k}: golden ${JSON.stringify(g)}, model ${JSON.stringify(m)}`).join('; '),
  };
}

async function read(t: tf.Tensor): Promise<Float32Array> {
  return (await t.data()) as Float32Array;
}

export async function checkOptGolden(goldenDir: string): Promise<ParityCheck[]> {
  const path = join(goldenDir, 'golden.json');
  if (!existsSync(path)) throw new InputError('OPT golden set has no golden.json', { file: goldenDir });
  const golden = readGolden(path);
  const bigPath = join(goldenDir, 'golden.safetensors');
  if (!existsSync(bigPath)) throw new InputError('OPT golden set has no golden.safetensors (full logits rows)', { file: goldenDir });
  const big = readSafetensors(bigPath).tensors;
  const fullRows = (key: string): Float32Array => {
    const t = big.get(key);
    if (!t) throw new InputError(`no tensor '${key}'`, { file: bigPath });
    return t.data as Float32Array;
  };
  const m = await loadModel(join(goldenDir, 'model'));
  if (!(m.model instanceof OptModel)) {
    m.model.dispose();
    throw new InputError(`the golden set's model/ loaded as '${m.model.architecture}', expected an OPT (model_type opt)`, { file: join(goldenDir, 'model') });
  }
  const model = m.model;
  const tokenizer: TextTokenizer = m.tokenizer;
  const V = model.config.vocabSize;
  const sampleIds = golden.logit_sample_ids;
  const checks: ParityCheck[] = [configCheck(model, golden.config)];
  try {
    for (const c of golden.cases) {
      if ((c as BatchCase).kind === 'batch') continue;
      const sc = c as SingleCase;
      const name = `opt/${sc.name}`;
      checks.push(sameInts(`${name}/ids`, tokenizer.encode(sc.input_text).ids, sc.ids));
      const T = sc.ids.length;
      const mask = new Int32Array(T).fill(1);
      checks.push(sameInts(`${name}/position_ids`, optPositionIds(mask, 1, T, T), sc.position_ids));
      // From the golden ids, so a tokenizer difference is reported once, above.
      const out = model.decode({ inputIds: Int32Array.from(sc.ids), batch: 1, seqLen: T, attentionMask: mask }, { logits: 'all', outputHiddenStates: true });
      try {
        if (out.hiddenStates.length !== sc.hidden_states.length) {
          checks.push({ name: `${name}/hidden_states`, ok: false, detail: `${out.hiddenStates.length} hidden states, golden has ${sc.hidden_states.length}` });
        } else {
          for (const [i, h] of out.hiddenStates.entries()) checks.push(closeTo(`${name}/hidden_states[${i}]`, await read(h), sc.hidden_states[i].flat(), OPT_HIDDEN_TOLERANCE));
        }
        const last = await read(out.lastHiddenState);
        checks.push(closeTo(`${name}/last_hidden_state`, last, sc.last_hidden_state.flat(), OPT_HIDDEN_TOLERANCE));
        const W = model.hiddenSize;
        checks.push(closeTo(`${name}/sentence_embedding`, last.subarray((T - 1) * W, T * W), sc.sentence_embedding, OPT_HIDDEN_TOLERANCE));
        const rows = [...Array(T).keys()];
        checks.push(
          ...logitChecks(name, await read(out.logits!), V, rows, sampleIds, { argmax: sc.logits_argmax, max: sc.logits_max, lse: sc.logits_logsumexp, sampled: sc.logits_sampled }, { rows: sc.logits_full_rows, data: fullRows(`${sc.name}.logits`) }),
        );
      } finally {
        tf.dispose([out.lastHiddenState, ...out.hiddenStates, out.logits!]);
      }
    }
    const batch = golden.cases.find((c) => (c as BatchCase).kind === 'batch') as BatchCase;
    checks.push(...(await batchChecks(model, tokenizer, batch, golden, fullRows)));
    checks.push(...(await greedyChecks({ model, tokenizer }, golden.greedy)));
  } finally {
    model.dispose();
  }
  return checks;
}

/** The batch case, padded on each side: tokenisation and padding, then every tensor where the mask is 1. */
async function batchChecks(model: OptModel, tokenizer: TextTokenizer, batch: BatchCase, golden: OptGolden, fullRows: (key: string) => Float32Array): Promise<ParityCheck[]> {
  const checks: ParityCheck[] = [];
  const encoded = batch.input_texts.map((t) => tokenizer.encode(t));
  batch.input_texts.forEach((_, b) => checks.push(sameInts(`opt/batch/row${b}/ids`, encoded[b].ids, batch.ids_unpadded[b])));
  const V = model.config.vocabSize;
  for (const side of ['left', 'right'] as const) {
    const want = batch[side];
    const name = `opt/batch/${side}`;
    const padded = tokenizer.pad(encoded, { padSide: side });
    checks.push(sameInts(`${name}/input_ids`, padded.inputIds, want.input_ids.flat()));
    checks.push(sameInts(`${name}/attention_mask`, padded.attentionMask, want.attention_mask.flat()));
    const B = want.input_ids.length;
    const T = want.input_ids[0].length;
    const mask = Int32Array.from(want.attention_mask.flat());
    const real = [...mask.keys()].filter((i) => mask[i] === 1);
    const positions = optPositionIds(mask, B, T, T);
    checks.push(sameInts(`${name}/position_ids (real tokens)`, real.map((i) => positions[i]), real.map((i) => want.position_ids.flat()[i])));
    // From the golden ids and mask, so a padding difference is reported once, above.
    const out = model.decode({ inputIds: Int32Array.from(want.input_ids.flat()), batch: B, seqLen: T, attentionMask: mask }, { logits: 'all', outputHiddenStates: true });
    try {
      for (const [i, h] of out.hiddenStates.entries()) {
        const width = h.shape[2];
        const wanted = want.hidden_states[i];
        if (!wanted) {
          checks.push({ name: `${name}/hidden_states[${i}]`, ok: false, detail: `golden has ${want.hidden_states.length} hidden states` });
          continue;
        }
        checks.push(closeTo(`${name}/hidden_states[${i}] (real tokens)`, pickRows(await read(h), width, real), pickRows(Float32Array.from(wanted.flat(2)), width, real), OPT_HIDDEN_TOLERANCE));
      }
      const W = model.hiddenSize;
      const last = await read(out.lastHiddenState);
      checks.push(closeTo(`${name}/last_hidden_state (real tokens)`, pickRows(last, W, real), pickRows(Float32Array.from(want.last_hidden_state.flat(2)), W, real), OPT_HIDDEN_TOLERANCE));
      const lastRows = want.last_token_index.map((t, b) => b * T + t);
      checks.push(closeTo(`${name}/sentence_embedding (last real token)`, pickRows(last, W, lastRows), want.sentence_embedding.flat(), OPT_HIDDEN_TOLERANCE));
      const realOf = (m: Matrix) => real.map((i) => m.flat()[i]);
      const sampledReal = real.map((i) => want.logits_sampled.flat()[i]);
      checks.push(
        ...logitChecks(name, await read(out.logits!), V, real, golden.logit_sample_ids, { argmax: realOf(want.logits_argmax), max: realOf(want.logits_max), lse: realOf(want.logits_logsumexp), sampled: sampledReal }, {
          rows: want.logits_full_rows.map((t, b) => b * T + t),
          data: fullRows(`batch.${side}.logits`),
        }),
      );
    } finally {
      tf.dispose([out.lastHiddenState, ...out.hiddenStates, out.logits!]);
    }
  }
  // PromptEOL through the project's encoder (left padding, last-token pooling), with the set's template.
  const template = golden.prompteol_template.replace('{}', '{text}');
  const encoder = new PromptSentenceEncoder({ model, tokenizer }, { template, batchSize: batch.texts.length });
  const emb = await encoder.encode(batch.texts);
  checks.push(closeTo('opt/batch/prompt-encoder/sentence_embedding', emb.data, batch.left.sentence_embedding.flat(), OPT_HIDDEN_TOLERANCE));
  return checks;
}

/** Greedy continuations, each prompt alone and all of them in one left-padded batch (KV cache). */
async function greedyChecks(m: { model: OptModel; tokenizer: TextTokenizer }, greedy: readonly GreedyCase[]): Promise<ParityCheck[]> {
  const checks: ParityCheck[] = [];
  for (const [i, g] of greedy.entries()) {
    const name = `opt/greedy${i}`;
    checks.push(sameInts(`${name}/prompt_ids`, m.tokenizer.encode(g.prompt).ids, g.ids));
    const [out] = await generate(m, [g.ids], { maxNewTokens: g.new_ids.length, eosTokenIds: [] });
    checks.push(sameInts(`${name}/new_ids`, out.ids, g.new_ids));
    checks.push(sameText(`${name}/new_text`, out.text, g.new_text));
  }
  const longest = Math.max(...greedy.map((g) => g.new_ids.length));
  const batched = await generate(
    m,
    greedy.map((g) => g.ids),
    { maxNewTokens: longest, eosTokenIds: [] },
  );
  greedy.forEach((g, i) => checks.push(sameInts(`opt/greedy-batched-left-padded/prompt${i}/new_ids`, batched[i].ids.slice(0, g.new_ids.length), g.new_ids)));
  return checks;
}
