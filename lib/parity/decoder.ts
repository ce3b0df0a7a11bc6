/**
 * Decoder parity against a golden set in the llama2.c layout (../shared/golden/llama2c-stories260K/
 * README.md): `golden.json` with llama2.c run.c's outputs for each prompt, and the set's own
 * `model/` folder (checkpoint + tokenizer.bin). Every number is read from the set, so any set of
 * this layout (other prompts, other lengths, another checkpoint) is checked the same way:
 *
 * - tokenizer ids identical to run.c's encode(text, BOS);
 * - logits and final hidden states at every position within 1e-4 (one prompt per forward pass);
 * - greedy continuation of each prompt alone: ids identical, text identical (run.c's decode);
 * - all prompts' greedy continuations generated together in one left-padded batch: ids identical.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tf } from '../backend/index.js';
import { generate } from '../models/llama/generate.js';
import { loadLlamaModel } from '../models/llama/load.js';
import { InputError } from '../util/errors.js';
import { check, maxAbsDiff, type ParityCheck } from './check.js';

/** llama2.c's README: fp32 logits and hidden states agree to about 1e-4 (summation order). */
export const DECODER_TOLERANCE = 1e-4;

interface GoldenPrompt {
  text: string;
  ids: number[];
  logits: number[][];
  hidden: number[][];
  greedy_ids: number[];
  greedy_text: string;
}

interface DecoderGolden {
  config: Record<string, number>;
  prompts: GoldenPrompt[];
}

function readGolden(path: string): DecoderGolden {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new InputError(`cannot read the decoder golden file: ${(e as Error).message}`, { file: path });
  }
  const g = raw as DecoderGolden;
  if (!g || !Array.isArray(g.prompts) || g.prompts.length === 0) throw new InputError("expected a non-empty 'prompts' list", { file: path });
  g.prompts.forEach((p, i) => {
    const ok =
      typeof p.text === 'string' &&
      Array.isArray(p.ids) &&
      Array.isArray(p.logits) &&
      Array.isArray(p.hidden) &&
      Array.isArray(p.greedy_ids) &&
      typeof p.greedy_text === 'string' &&
      p.logits.length === p.ids.length &&
      p.hidden.length === p.ids.length;
    if (!ok) throw new InputError(`prompts[${i}] needs text, ids, logits and hidden (one row per id), greedy_ids and greedy_text`, { file: path });
  });
  return g;
}

function sameIds(name: string, got: readonly number[], want: readonly number[]): ParityCheck {
  const n = Math.max(got.length, want.length);
  for (let i = 0; i < n; i++) {
    if (got[i] !== want[i]) {
      return { name, ok: false, detail: `first difference at index ${i}: got ${got[i]}, want ${want[i]} (lengths ${got.length} vs ${want.length})` };
    }
  }
  return { name, ok: true, detail: `identical (${want.length} ids)` };
}

function sameText(name: string, got: string, want: string): ParityCheck {
  if (got === want) return { name, ok: true, detail: `identical (${want.length} characters)` };
  let i = 0;
  while (i < got.length && got[i] === want[i]) i++;
  return { name, ok: false, detail: `differs at character ${i}: got ${JSON.stringify(got.slice(i, i + 20))}, want ${JSON.stringify(want.slice(i, i + 20))}` };
}

export async function checkDecoderGolden(goldenDir: string): Promise<ParityCheck[]> {
  const path = join(goldenDir, 'golden.json');
  if (!existsSync(path)) throw new InputError('decoder golden set has no golden.json', { file: goldenDir });
  const golden = readGolden(path);
  const m = await loadLlamaModel(join(goldenDir, 'model'));
  const checks: ParityCheck[] = [];
  try {
    const cfg = m.model.config;
    const header = { dim: cfg.hiddenSize, hidden_dim: cfg.intermediateSize, n_layers: cfg.numLayers, n_heads: cfg.numHeads, n_kv_heads: cfg.numKvHeads, vocab_size: cfg.vocabSize, seq_len: cfg.maxPositions };
    const mismatch = Object.entries(golden.config ?? {}).filter(([k, v]) => k in header && header[k as keyof typeof header] !== v);
    checks.push({
      name: 'decoder/config',
      ok: mismatch.length === 0,
      detail: mismatch.length === 0 ? 'checkpoint header equals golden config' : mismatch.map(([k, v]) => `${k}: golden ${v}, checkpoint ${header[k as keyof typeof header]}`).join('; '),
    });
    for (const [i, p] of golden.prompts.entries()) {
      const name = `decoder/prompt${i}`;
      const ids = m.tokenizer.encode(p.text).ids;
      checks.push(sameIds(`${name}/ids`, ids, p.ids));
      // Logits and hidden states from the golden ids, so a tokenizer difference is reported once, above.
      const T = p.ids.length;
      const out = m.model.decode({ inputIds: Int32Array.from(p.ids), batch: 1, seqLen: T, attentionMask: new Int32Array(T).fill(1) }, { logits: 'all' });
      const logits = (await out.logits!.data()) as Float32Array;
      const hidden = (await out.lastHiddenState.data()) as Float32Array;
      tf.dispose([out.logits!, out.lastHiddenState, ...out.hiddenStates]);
      checks.push(check(`${name}/logits`, maxAbsDiff(logits, p.logits.flat()), DECODER_TOLERANCE));
      checks.push(check(`${name}/hidden`, maxAbsDiff(hidden, p.hidden.flat()), DECODER_TOLERANCE));
      const [g] = await generate(m, [p.ids], { maxNewTokens: p.greedy_ids.length, eosTokenIds: [] });
      checks.push(sameIds(`${name}/greedy_ids`, g.ids, p.greedy_ids));
      checks.push(sameText(`${name}/greedy_text`, g.text, p.greedy_text));
    }
    // All prompts in one left-padded batch: the forward pass, then greedy generation.
    const batch = m.tokenizer.pad(
      golden.prompts.map((p) => ({ ids: p.ids, typeIds: p.ids.map(() => 0) })),
      { padSide: 'left' },
    );
    const out = m.model.decode({ inputIds: batch.inputIds, batch: batch.batch, seqLen: batch.seqLen, attentionMask: batch.attentionMask }, { logits: 'all' });
    const logits = (await out.logits!.data()) as Float32Array;
    const hidden = (await out.lastHiddenState.data()) as Float32Array;
    tf.dispose([out.logits!, out.lastHiddenState, ...out.hiddenStates]);
    const V = cfg.vocabSize;
    const H = cfg.hiddenSize;
    let worstLogits = 0;
    let worstHidden = 0;
    golden.prompts.forEach((p, b) => {
      const first = b * batch.seqLen + batch.seqLen - p.ids.length;
      worstLogits = Math.max(worstLogits, maxAbsDiff(logits.subarray(first * V, (first + p.ids.length) * V), p.logits.flat()));
      worstHidden = Math.max(worstHidden, maxAbsDiff(hidden.subarray(first * H, (first + p.ids.length) * H), p.hidden.flat()));
    });
    checks.push(check('decoder/batched-left-padded/logits', worstLogits, DECODER_TOLERANCE));
    checks.push(check('decoder/batched-left-padded/hidden', worstHidden, DECODER_TOLERANCE));
    const longest = Math.max(...golden.prompts.map((p) => p.greedy_ids.length));
    const batched = await generate(
      m,
      golden.prompts.map((p) => p.ids),
      { maxNewTokens: longest, eosTokenIds: [] },
    );
    golden.prompts.forEach((p, i) => {
      const g = batched[i];
      checks.push(sameIds(`decoder/batched-left-padded/prompt${i}/greedy_ids`, g.ids.slice(0, p.greedy_ids.length), p.greedy_ids));
      // Rows with a shorter golden continuation generated further: their golden text is a prefix.
      const text = g.ids.length > p.greedy_ids.length && g.text.startsWith(p.greedy_text) ? p.greedy_text : g.text;
      checks.push(sameText(`decoder/batched-left-padded/prompt${i}/greedy_text`, text, p.greedy_text));
    });
  } finally {
    m.model.dispose();
  }
  return checks;
}
