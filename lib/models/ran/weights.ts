/**
 * RanNet's parameters: the checkpoint's own variable names (`RanNet.variable_mapping`,
 * rannet.py:250-315, as ../shared/golden/ran-tiny-seed11/README.md lists them, e.g.
 * `rannet/ran-0/encode-attn/dense-q/kernel` [in, out]) and the names the model keeps them under.
 *
 * The model's own names replace '/' by '.' and hold each Dense kernel transposed, PyTorch's
 * [out, in] layout, as `<module>.weight` (`rannet.ran-0.encode-attn.dense-q.weight`): the layout
 * the adapter base (../adaptable-transformer-model.ts) and LoRA expect, so LoRA targets like
 * `dense-q` match by PEFT's `.`-suffix rule. LayerNorm `gamma` / `beta`, biases and the token
 * embedding keep their last name part. A checkpoint may come in either naming: the Keras names of
 * a converted release or of a golden set, or the model's names (what training writes to `best/`).
 */
import { fitParameters } from '../check-parameters.js';
import type { RanConfig } from './config.js';

export interface RanRawTensor {
  shape: number[];
  data: Float32Array | Int32Array;
}

/** The Dense modules of one RAN layer (Keras names under `rannet/ran-<i>/`) and whether each has a bias. */
function layerDenseModules(cfg: RanConfig): Array<{ name: string; inp: number; out: number; bias: boolean }> {
  const D = cfg.hiddenSize;
  const A = cfg.headNum * cfg.headSize;
  const m: Array<{ name: string; inp: number; out: number; bias: boolean }> = [];
  for (const g of ['dense-t', 'dense-g']) m.push({ name: `cell-glu/${g}`, inp: D, out: D, bias: true });
  m.push({ name: 'cell-initializer', inp: D, out: D, bias: false }); // ran.py:682-688, use_bias=False
  for (const g of ['dense-t', 'dense-g']) m.push({ name: `encode-attn/glu/${g}`, inp: D, out: D, bias: true });
  for (const d of ['dense-q', 'dense-k', 'dense-v']) m.push({ name: `encode-attn/${d}`, inp: D, out: A, bias: true });
  m.push({ name: 'encode-attn/dense-o', inp: A, out: D, bias: true });
  for (const g of ['dense-t', 'dense-g']) m.push({ name: `output-attn/glu/${g}`, inp: D, out: D, bias: true });
  for (const d of ['dense-q', 'dense-k', 'dense-v', 'dense-o']) m.push({ name: `output-attn/${d}`, inp: D, out: D, bias: true });
  return m;
}

const LAYER_NORMS = ['cell-initializer-layernorm', 'cell-residual-layernorm', 'concat-layernorm', 'encode-attn/layernorm', 'output-attn/layernorm'];

/** The apply_cell_transform head (rannet.py:176-193): not in a released checkpoint, optional here. */
const CELL_TRANSFORM_DENSE = ['output-cell-dense', 'output-cell-glu/dense-t', 'output-cell-glu/dense-g', 'output-pooling-dense'];

/** Model name of a Keras module path: `rannet/ran-0/encode-attn/dense-q` -> `rannet.ran-0.encode-attn.dense-q`. */
export function ranModuleName(kerasPath: string): string {
  return kerasPath.split('/').join('.');
}

/** Keras variable name -> model parameter name (kernel -> weight, which is then stored transposed). */
export function ranParameterName(kerasName: string): string {
  return ranModuleName(kerasName.replace(/\/kernel$/, '/weight'));
}

/** Every Dense module the adapters may wrap (LoRA), by model name: [out, in]. */
export function ranLinearModules(cfg: RanConfig): Map<string, readonly [number, number]> {
  const m = new Map<string, readonly [number, number]>();
  for (let i = 0; i < cfg.numLayers; i++) {
    for (const d of layerDenseModules(cfg)) m.set(ranModuleName(`rannet/ran-${i}/${d.name}`), [d.out, d.inp]);
  }
  return m;
}

/** Expected parameters under the Keras checkpoint names and Keras shapes ([in, out] kernels). */
export function ranCheckpointShapes(cfg: RanConfig, withCellTransform = false): Map<string, number[]> {
  const D = cfg.hiddenSize;
  const s = new Map<string, number[]>();
  s.set('rannet/token-embedding/embeddings', [cfg.vocabSize, D]);
  s.set('rannet/embedding-layernorm/gamma', [D]);
  s.set('rannet/embedding-layernorm/beta', [D]);
  for (let i = 0; i < cfg.numLayers; i++) {
    const r = `rannet/ran-${i}`;
    for (const d of layerDenseModules(cfg)) {
      s.set(`${r}/${d.name}/kernel`, [d.inp, d.out]);
      if (d.bias) s.set(`${r}/${d.name}/bias`, [d.out]);
    }
    for (const ln of LAYER_NORMS) {
      s.set(`${r}/${ln}/gamma`, [D]);
      s.set(`${r}/${ln}/beta`, [D]);
    }
  }
  if (withCellTransform) {
    for (const d of CELL_TRANSFORM_DENSE) {
      s.set(`rannet/${d}/kernel`, [D, D]);
      s.set(`rannet/${d}/bias`, [D]);
    }
  }
  return s;
}

/** [rows, cols] row-major -> [cols, rows]. */
function transpose2d(t: RanRawTensor): RanRawTensor {
  const [r, c] = t.shape;
  const out = new Float32Array(r * c);
  const src = t.data;
  for (let i = 0; i < r; i++) for (let j = 0; j < c; j++) out[j * r + i] = src[i * c + j];
  return { shape: [c, r], data: out };
}

/**
 * The model's parameters from a checkpoint in either naming (see the file comment): every tensor
 * the config needs, with its shape, and nothing unexpected (a masked-LM head, `rannet/mlm-*`, is
 * skipped: the encoder does not use it). The cell-transform head is taken when all of it is there.
 */
export function mapRanWeights(cfg: RanConfig, tensors: ReadonlyMap<string, RanRawTensor>, file: string): Map<string, RanRawTensor> {
  const keras = new Map<string, RanRawTensor>();
  for (const [name, t] of tensors) {
    if (name.includes('/')) {
      if (/^rannet\/mlm-/.test(name)) continue; // the pre-training head (rannet.py:119-129)
      keras.set(name, t);
      continue;
    }
    // The model's own naming: back to the Keras name and layout, so one check covers both.
    const isWeight = name.endsWith('.weight') && !name.startsWith('rannet.token-embedding');
    const kname = name.split('.').join('/').replace(/\/weight$/, isWeight ? '/kernel' : '/weight');
    keras.set(kname, isWeight && t.shape.length === 2 ? transpose2d(t) : t);
  }
  const withHead = CELL_TRANSFORM_DENSE.every((d) => keras.has(`rannet/${d}/kernel`));
  const fitted = fitParameters(keras, ranCheckpointShapes(cfg, withHead), {
    file,
    target: `the RanNet config (${cfg.numLayers} layers, D ${cfg.hiddenSize}, ${cfg.headNum} heads x ${cfg.headSize})`,
    unexpectedLabel: 'unexpected RanNet tensors',
  });
  const out = new Map<string, RanRawTensor>();
  for (const [name, t] of fitted) out.set(ranParameterName(name), name.endsWith('/kernel') ? transpose2d(t) : t);
  return out;
}
