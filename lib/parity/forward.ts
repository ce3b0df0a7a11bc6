/**
 * Forward parity against a golden directory (layout: shared/golden/README.md, beside the repository):
 * tokenizer ids for every sentence and the pair, every tensor of forward.safetensors, and the
 * same outputs from the weights under the original checkpoint naming. The forward pass runs on the
 * model's tfjs forward (the reference) or on another inference engine (`engine: 'onnx'`: ONNX
 * Runtime over the exported graph, lib/embed/engines).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tf } from '../backend/index.js';
import { chooseInferenceEngine, type InferenceEngineChoice } from '../embed/engines/choose.js';
import { zeroPaddingSlots } from '../embed/engines/graph-feeds.js';
import type { EngineOutput } from '../embed/engines/types.js';
import { parsePooling, pool, POOLING_STRATEGIES, readsPaddingPositions } from '../embed/pooling.js';
import { loadModel, type LoadedModel } from '../models/auto.js';
import { readSafetensors, type TensorEntry } from '../models/safetensors.js';
import type { TokenBatch } from '../models/tokenizers/hf.js';
import { InputError } from '../util/errors.js';
import { check, maxAbsDiff, type ParityCheck } from './check.js';

/** fp32 activations agree with PyTorch to about 1e-5 (golden README). */
export const FORWARD_TOLERANCE = 1e-5;

interface ForwardJson {
  sentences: string[];
  max_length: number;
  pair?: { a: string; b: string; ids: number[]; type_ids: number[] };
}

function sameInts(name: string, got: ArrayLike<number>, want: ArrayLike<number>): ParityCheck {
  let firstDiff = -1;
  const n = Math.max(got.length, want.length);
  for (let i = 0; i < n && firstDiff < 0; i++) if (got[i] !== want[i]) firstDiff = i;
  return firstDiff < 0
    ? { name, ok: true, detail: `identical (${want.length} values)` }
    : { name, ok: false, detail: `first difference at index ${firstDiff}: got ${got[firstDiff]}, want ${want[firstDiff]} (lengths ${got.length} vs ${want.length})` };
}

/**
 * Every float output of the model for the golden batch, keyed like forward.safetensors.
 * `full` (HF's tensors, padding slots included): engines compute the padding slots too
 * (padPositions). `packed`: what the encoders run on the ONNX engine, real tokens only (padding
 * slots come back as zeros; compared against the golden tensors masked the same way); poolings
 * that read padding slots are left out of it. `first`: the [CLS]-only graph, pool_cls alone.
 */
async function computeOutputs(m: LoadedModel, batch: TokenBatch, keys: string[], engine: InferenceEngineChoice, mode: 'full' | 'packed' | 'first' = 'full'): Promise<Map<string, Float32Array>> {
  let o: EngineOutput;
  if (engine === 'tfjs') o = m.model.forward(batch, { outputHiddenStates: true });
  else {
    const e = await chooseInferenceEngine(m.model, { engine });
    o = await e.run(batch, mode === 'full' ? { hiddenStates: true, padPositions: true } : mode === 'packed' ? { hiddenStates: true } : { hiddenStates: false, firstTokenOnly: true });
  }
  const out = new Map<string, Float32Array>();
  try {
    tf.tidy(() => {
      const mask = tf.tensor2d(batch.attentionMask, [batch.batch, batch.seqLen], 'int32');
      for (const key of keys.filter(isKnownOutput)) {
        let t: tf.Tensor | undefined;
        if (mode === 'first') {
          if (key === 'pool_cls') t = pool('cls', { lastHiddenState: o.lastHiddenState, attentionMask: mask });
        } else if (key === 'last_hidden_state') t = o.lastHiddenState;
        else if (key === 'pooler_output') t = o.poolerOutput;
        else if (/^hidden_state_\d+$/.test(key)) t = o.hiddenStates[Number(key.slice('hidden_state_'.length))];
        else if (key.startsWith('pool_')) {
          const p = parsePooling(key.slice(5));
          if (mode === 'full' || !readsPaddingPositions(p)) t = pool(p, { lastHiddenState: o.lastHiddenState, hiddenStates: o.hiddenStates, attentionMask: mask });
        }
        if (t) out.set(key, t.dataSync() as Float32Array);
      }
    });
  } finally {
    tf.dispose([o.lastHiddenState, ...o.hiddenStates, ...(o.poolerOutput ? [o.poolerOutput] : [])]);
  }
  return out;
}

/** Golden [batch, sequence, hidden] states with the padding slots zeroed (what a packed graph returns). */
function maskedGolden(golden: Map<string, TensorEntry>, mask: Int32Array): Map<string, TensorEntry> {
  const out = new Map<string, TensorEntry>();
  for (const [key, t] of golden) {
    if (key !== 'last_hidden_state' && !/^hidden_state_\d+$/.test(key)) {
      out.set(key, t);
      continue;
    }
    out.set(key, { ...t, data: zeroPaddingSlots(t.data, mask) });
  }
  return out;
}

function isKnownOutput(key: string): boolean {
  if (key === 'last_hidden_state' || key === 'pooler_output' || /^hidden_state_\d+$/.test(key)) return true;
  return key.startsWith('pool_') && (POOLING_STRATEGIES as readonly string[]).includes(key.slice(5));
}

function compareOutputs(prefix: string, golden: Map<string, TensorEntry>, ours: Map<string, Float32Array>, floatKeys: string[], onlyComputed = false): ParityCheck[] {
  return floatKeys.filter((key) => !onlyComputed || ours.has(key)).map((key) => {
    const name = `${prefix}/${key}`;
    if (!isKnownOutput(key)) return { name, ok: false, detail: `unknown golden tensor '${key}': no computation maps to it` };
    const got = ours.get(key);
    if (!got) return { name, ok: false, detail: 'the model produced no such output (e.g. no pooler in the checkpoint)' };
    const want = golden.get(key)!.data;
    if (got.length !== want.length) return { name, ok: false, detail: `size ${got.length}, golden ${want.length}` };
    return check(name, maxAbsDiff(got, want), FORWARD_TOLERANCE);
  });
}

export interface ForwardGoldenOptions {
  /** The engine that runs the forward pass: `tfjs` (default, the reference) or `onnx`. */
  engine?: InferenceEngineChoice;
}

export async function checkForwardGolden(goldenDir: string, opts: ForwardGoldenOptions = {}): Promise<ParityCheck[]> {
  const engine = opts.engine ?? 'tfjs';
  const fjPath = join(goldenDir, 'forward.json');
  if (!existsSync(fjPath)) throw new InputError('golden directory has no forward.json', { file: goldenDir });
  const fj = JSON.parse(readFileSync(fjPath, 'utf8')) as ForwardJson;
  if (!Array.isArray(fj.sentences) || typeof fj.max_length !== 'number') throw new InputError("expected 'sentences' (array) and 'max_length' (number)", { file: fjPath });
  const golden = readSafetensors(join(goldenDir, 'forward.safetensors')).tensors;
  const checks: ParityCheck[] = [];

  const m = await loadModel(join(goldenDir, 'model'));
  try {
    const batch = m.tokenizer.encodeBatch(fj.sentences, { maxLength: fj.max_length });
    const intKeys: Array<[string, Int32Array]> = [
      ['input_ids', batch.inputIds],
      ['attention_mask', batch.attentionMask],
      ['token_type_ids', batch.tokenTypeIds],
    ];
    for (const [key, got] of intKeys) {
      const g = golden.get(key);
      checks.push(g ? sameInts(`tokenizer/${key}`, got, g.data) : { name: `tokenizer/${key}`, ok: false, detail: 'missing from forward.safetensors' });
    }
    if (fj.pair) {
      const p = m.tokenizer.encode(fj.pair.a, fj.pair.b, fj.max_length);
      checks.push(sameInts('tokenizer/pair_ids', p.ids, fj.pair.ids));
      checks.push(sameInts('tokenizer/pair_type_ids', p.typeIds, fj.pair.type_ids));
    }
    const floatKeys = [...golden.keys()].filter((k) => !intKeys.some(([ik]) => ik === k)).sort();
    checks.push(...compareOutputs('forward', golden, await computeOutputs(m, batch, floatKeys, engine), floatKeys));
    if (engine !== 'tfjs') {
      // what the encoders run: real tokens only, and the [CLS]-only last layer
      const masked = maskedGolden(golden, batch.attentionMask);
      checks.push(...compareOutputs('forward-packed', masked, await computeOutputs(m, batch, floatKeys, engine, 'packed'), floatKeys, true));
      checks.push(...compareOutputs('forward-first-token', golden, await computeOutputs(m, batch, floatKeys, engine, 'first'), floatKeys, true));
    }

    const hubNaming = join(goldenDir, 'model-hub-naming.safetensors');
    if (existsSync(hubNaming)) {
      const h = await loadModel(join(goldenDir, 'model'), { weightFiles: [hubNaming] });
      try {
        let worst = 0;
        for (const [name, v] of m.model.params) worst = Math.max(worst, maxAbsDiff(v.dataSync(), h.model.params.get(name)!.dataSync()));
        checks.push(check('weights/hub-naming-equal', worst, 0));
        const hubKeys = floatKeys.filter((k) => k === 'last_hidden_state' || k === 'pooler_output');
        checks.push(...compareOutputs('forward-hub-naming', golden, await computeOutputs(h, batch, hubKeys, engine), hubKeys));
      } finally {
        h.model.dispose();
      }
    }
  } finally {
    m.model.dispose();
  }
  return checks;
}
