/**
 * RanNet parity against a golden set of the `rannet-golden-v1` layout
 * (../shared/golden/ran-tiny-seed11/README.md): `golden.json` (config, cases, tolerances),
 * `golden.safetensors` (`<case>.<tensor>` inputs and expected outputs, batch-first) and the set's
 * own `model/` folder, loaded through loadModel as any RanNet folder is. Everything — sizes,
 * windows, layer count, cases — is read from the set, so any set of this layout is checked the same
 * way (another seed, width, depth, heads, window sizes, cell_pooling):
 *
 * - the config as the model parsed it equals golden.json's;
 * - per case: the tokenizer's ids (a batch case: padded to the longest row, right) and the mask,
 *   exactly; the windows of the padded length, exactly;
 * - the embedding output and, per layer, the tokens before and after the memory review, each
 *   window's raw cell and the cell fed into it, the last cell and the mean / max pooled cells —
 *   pad positions included (they are defined, convention 9);
 * - the sentence embedding (top layer's mean of cells), also as the model's `poolerOutput` (what
 *   the sentence encoders pool), the cell pooled by the config's `cell_pooling` (RanNet's
 *   return_cell) and, where the set's model has the head, both apply_cell_transform outputs;
 * - history: the second text run with the stored Input-Cell, and again with the Input-Cell this
 *   port computed for the first text (its top last cell), which must agree the same way.
 *
 * Tolerance: golden.json's `tolerances.activations_abs` (1e-5 for the visible set) absolute.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tf } from '../backend/index.js';
import { loadModel } from '../models/auto.js';
import type { RanModel } from '../models/ran/model.js';
import { readSafetensors } from '../models/safetensors.js';
import type { TextTokenizer, TokenBatch } from '../models/types.js';
import { InputError } from '../util/errors.js';
import { check, maxAbsDiff, type ParityCheck } from './check.js';

/** golden.json `format` of this layout. */
export const RAN_GOLDEN_FORMAT = 'rannet-golden-v1';
const DEFAULT_TOLERANCE = 1e-5;

interface RanCase {
  name: string;
  kind: string;
  texts: string[];
  ids: number[][];
  batch: number;
  T: number;
  windows: Array<[number, number]>;
  with_cell: boolean;
}

interface RanGolden {
  format: string;
  config: Record<string, unknown>;
  cases: RanCase[];
  tolerances?: { activations_abs?: number };
}

/** Whether a golden.json head is of this layout. */
export function isRanGoldenHead(head: Record<string, unknown>): boolean {
  return head.format === RAN_GOLDEN_FORMAT;
}

function readGolden(dir: string): RanGolden {
  const file = join(dir, 'golden.json');
  let g: RanGolden;
  try {
    g = JSON.parse(readFileSync(file, 'utf8')) as RanGolden;
  } catch (e) {
    throw new InputError(`not readable JSON: ${(e as Error).message}`, { file });
  }
  if (!isRanGoldenHead(g as unknown as Record<string, unknown>)) throw new InputError(`expected format '${RAN_GOLDEN_FORMAT}', found ${JSON.stringify(g.format)}`, { file });
  if (!Array.isArray(g.cases) || g.cases.length === 0) throw new InputError('has no cases', { file });
  return g;
}

/** The ids the tokenizer gives a case, padded as the reference padded them (right, to the longest row). */
function tokenize(tok: TextTokenizer, c: RanCase): TokenBatch {
  return tok.encodeBatch(c.texts, { padding: 'longest', padSide: 'right' });
}

export async function checkRanGolden(goldenDir: string): Promise<ParityCheck[]> {
  const g = readGolden(goldenDir);
  const tol = g.tolerances?.activations_abs ?? DEFAULT_TOLERANCE;
  const stFile = join(goldenDir, 'golden.safetensors');
  if (!existsSync(stFile)) return [{ name: 'ran', ok: false, detail: `${stFile} is missing` }];
  const expected = readSafetensors(stFile).tensors;
  const loaded = await loadModel(join(goldenDir, 'model'));
  const model = loaded.model as RanModel;
  const checks: ParityCheck[] = [];
  const ref = (name: string): Float32Array | Int32Array => {
    const t = expected.get(name);
    if (!t) throw new InputError(`has no tensor '${name}'`, { file: stFile });
    return t.data;
  };
  const compare = (name: string, key: string, actual: tf.Tensor) => {
    if (!expected.has(key)) {
      checks.push({ name, ok: false, detail: `golden.safetensors has no '${key}'` });
      return;
    }
    const want = ref(key);
    const got = actual.dataSync();
    if (got.length !== want.length) checks.push({ name, ok: false, detail: `shape ${JSON.stringify(actual.shape)}: ${got.length} values, golden ${want.length}` });
    else checks.push(check(name, maxAbsDiff(got, want), tol));
  };
  try {
    // The config as parsed.
    const cfg = model.config;
    const want = g.config;
    const parsed: Record<string, unknown> = {
      vocab_size: cfg.vocabSize,
      embedding_size: cfg.hiddenSize,
      ran_layers: cfg.numLayers,
      head_num: cfg.headNum,
      head_size: cfg.headSize,
      window_size: cfg.windowSize,
      min_window_size: cfg.minWindowSize,
      cell_pooling: cfg.cellPooling,
    };
    const differ = Object.keys(parsed).filter((k) => k in want && want[k] !== parsed[k]);
    checks.push({ name: 'ran/config', ok: differ.length === 0, detail: differ.length === 0 ? `${Object.keys(parsed).length} fields as golden.json` : `differs in ${differ.map((k) => `${k}: ${String(parsed[k])} vs ${String(want[k])}`).join(', ')}` });

    const lastCells = new Map<string, Float32Array>();
    for (const c of g.cases) {
      const p = `ran/${c.name}`;
      const batch = tokenize(loaded.tokenizer, c);
      // The stored [B, T] ids, padded (golden.json lists each row unpadded).
      const wantIds = [...ref(`${c.name}.input_ids`)];
      const idsOk = batch.batch === c.batch && batch.seqLen === c.T && wantIds.every((v, i) => batch.inputIds[i] === v);
      checks.push({ name: `${p}/input_ids`, ok: idsOk, detail: idsOk ? `${c.batch} x ${c.T} identical` : `got [${batch.batch}, ${batch.seqLen}] ${JSON.stringify([...batch.inputIds].slice(0, 24))}..., golden ${JSON.stringify(wantIds.slice(0, 24))}...` });
      if (!idsOk) continue;
      const mask = ref(`${c.name}.attention_mask`);
      const maskOk = mask.length === batch.attentionMask.length && mask.every((v, i) => v === batch.attentionMask[i]);
      checks.push({ name: `${p}/attention_mask`, ok: maskOk, detail: maskOk ? 'identical (ids > 0)' : 'differs' });
      const windows = model.windows(c.T);
      const winOk = JSON.stringify(windows) === JSON.stringify(c.windows);
      checks.push({ name: `${p}/windows`, ok: winOk, detail: winOk ? `${JSON.stringify(c.windows)}` : `got ${JSON.stringify(windows)}, golden ${JSON.stringify(c.windows)}` });

      const runs: Array<{ label: string; cell?: Float32Array }> = [];
      if (c.with_cell) {
        runs.push({ label: '', cell: Float32Array.from(ref(`${c.name}.input_cell`)) });
        // history_second's Input-Cell is history_first's top last_cell: also feed ours.
        const ours = c.name === 'history_second' ? lastCells.get('history_first') : undefined;
        if (ours) runs.push({ label: '/from_our_history', cell: ours });
      } else runs.push({ label: '' });
      for (const run of runs) {
        const q = `${p}${run.label}`;
        const out = model.forwardRan(batch, { trace: true, inputCell: run.cell });
        try {
          compare(`${q}/embedding_output`, `${c.name}.embedding_output`, out.embeddingOutput!);
          out.layers!.forEach((l, i) => {
            const k = `${c.name}.layer${i}`;
            compare(`${q}/layer${i}.pre_review`, `${k}.pre_review`, l.preReview);
            compare(`${q}/layer${i}.outputs`, `${k}.outputs`, l.outputs);
            compare(`${q}/layer${i}.cells`, `${k}.cells`, l.cells);
            compare(`${q}/layer${i}.cell_in`, `${k}.cell_in`, l.cellIn);
            compare(`${q}/layer${i}.last_cell`, `${k}.last_cell`, l.lastCell);
            tf.tidy(() => {
              compare(`${q}/layer${i}.cell_mean`, `${k}.cell_mean`, model.poolCells(l.cells, l.lastCell, 'mean'));
              compare(`${q}/layer${i}.cell_max`, `${k}.cell_max`, model.poolCells(l.cells, l.lastCell, 'max'));
            });
          });
          const top = out.layers![out.layers!.length - 1];
          compare(`${q}/last_hidden_state`, `${c.name}.layer${out.layers!.length - 1}.outputs`, out.lastHiddenState);
          tf.tidy(() => compare(`${q}/sentence_embedding`, `${c.name}.sentence_embedding`, model.poolCells(top.cells, top.lastCell, 'mean')));
          // cell_pooling 'last' is the stored last_cell; 'mean' / 'max' the stored cell_mean / cell_max.
          const pooledKey = cfg.cellPooling === 'last' ? 'last_cell' : `cell_${cfg.cellPooling}`;
          compare(`${q}/pooled_cell(${cfg.cellPooling})`, `${c.name}.layer${out.layers!.length - 1}.${pooledKey}`, out.pooledCell);
          compare(`${q}/pooler_output`, `${c.name}.sentence_embedding`, out.poolerOutput!);
          if (model.hasCellTransform) {
            tf.tidy(() => {
              compare(`${q}/cell_transform.last_max`, `${c.name}.cell_transform.last_max`, model.cellTransform(top.lastCell, out.lastHiddenState, 'max'));
              const mean = model.poolCells(top.cells, top.lastCell, 'mean');
              compare(`${q}/cell_transform.mean_mean`, `${c.name}.cell_transform.mean_mean`, model.cellTransform(mean, out.lastHiddenState, 'mean'));
            });
          }
          if (!run.label) lastCells.set(c.name, Float32Array.from(out.lastCell.dataSync()));
        } finally {
          tf.dispose([out.lastHiddenState, out.lastCell, out.pooledCell, ...(out.poolerOutput ? [out.poolerOutput] : []), ...(out.embeddingOutput ? [out.embeddingOutput] : [])]);
          for (const l of out.layers ?? []) tf.dispose([l.preReview, l.outputs, l.cells, l.cellIn, l.lastCell]);
        }
      }
    }
  } finally {
    loaded.model.dispose();
  }
  return checks;
}
