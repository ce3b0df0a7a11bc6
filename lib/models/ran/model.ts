/**
 * RanNet (Recurrent Attention Network, Li et al., ACL 2023 Findings, arXiv 2306.06843) in tfjs-core
 * ops, computing what the Keras encoder of `rannet` 0.3.1 computes as the golden set's README
 * (../shared/golden/ran-tiny-seed11/README.md) states it in nine conventions; ran.py / rannet.py
 * line numbers below are those its transcription (ran_reference.py) cites.
 *
 *   embedding   LN(E[ids]) — no position embedding (rannet.py:166, 234)
 *   per layer   windows cut from the padded length (./windows.ts); each window sees the carried
 *               cell and its tokens: Z = LN_concat([c; X]); swish Dense q, k, v; rotary positions
 *               0..w restarting per window, pairs (2j, 2j+1); keys = the cell + real tokens (pads
 *               -1e12); out = swish(Dense_o(AV)) + GLU(Z), LN; row 0 is the window's raw cell, rows
 *               1.. its tokens, each `standard_normalize`d (ran.py:439-476)
 *               cell recurrence: window 1 gets raw_0, window k+1 gets LN_res(raw_k + GLU(raw_{k-1}))
 *               (ran.py:512-549); the initial cell is the Input-Cell / previous layer's last cell,
 *               replaced by LN_ci(swish(cell K_ci)) when the whole batch's cell tensor is zero
 *               (ran.py:488-504, a batch-wide tf.cond)
 *               memory review: every token attends over the C raw cells, its query row masked when
 *               it is a pad (ran.py:158-227, 606-607)
 *   outputs     the top layer's tokens (lastHiddenState); the sentence embedding, the mean of the
 *               top layer's raw cells — unmasked, all-pad windows count — as `poolerOutput` (the RAN
 *               README's "extract semantic feature": return_cell with cell_pooling 'mean', no cell
 *               transform), which pooling `cls_pooler` passes on; in `forwardRan` also the cell
 *               pooled by config.json's `cell_pooling` (RanNet's return_cell) and the top last cell
 *               (return_history, the next text's Input-Cell)
 *
 * LayerNorm here is langml's: (x − mean) / sqrt(mean(x²) + 1e-7), the UNCENTRED second moment
 * (ln.py:80-91, utils.py:42-47), so the fused centred LayerNorm of the other models is not used.
 *
 * Dropout (training only; the identity at inference, which is all the golden set pins down), at
 * dropout_rate everywhere the Keras code of ran.py (4AI/RAN at 1405d7b) applies its RAN's
 * dropout_rate: after the embedding LayerNorm (rannet.py:167); in each window after the concat
 * LayerNorm, on the attention probabilities, on the attention output before its GLU residual, and on
 * the normalised tokens and cell (do_step); on the initializer's cell (do_first_step); on the
 * residual cell of every loop step but not the final step (do_window_step / do_final_step); and in
 * the memory review on its probabilities and output (SelfAttention.call).
 *
 * Training: parameters are tf.Variables (Dense kernels as [out, in] `<module>.weight`, ./weights.ts)
 * on the adapter base, so LoRA attaches to every Dense layer of the RAN layers; each RAN layer runs
 * in a tf.tidy of its own, and with `checkpointing` it is one recomputed op (../../ops/checkpoint.ts)
 * over one packed tensor [cell; tokens; cells] so that the recurrent cell crosses layers through it.
 */
import { checkpoint, replayingDropout, trainableUnder } from '../../ops/checkpoint.js';
import { fusedDropout } from '../../ops/index.js';
import { customGrad } from '../../ops/kernel-call.js';
import { tf } from '../../backend/index.js';
import { InputError } from '../../util/errors.js';
import { AdaptableTransformerModel } from '../adaptable-transformer-model.js';
import type { AdaptableModel, AdapterContext } from '../adapters/types.js';
import type { InitialWeight } from '../transformer-model.js';
import type { ForwardOptions, ModelOutput, TokenBatch } from '../types.js';
import type { RanCellPooling, RanConfig } from './config.js';
import { ranLinearModules } from './weights.js';
import { ranWindows, type RanWindow } from './windows.js';

/** sequence_masking's stand-in for −inf (ran.py:44-45). */
const NEG_INF = -1e12;
/** langml LayerNorm's and standard_normalize's epsilon (ln.py:22, utils.py:42). */
const LN_EPS = 1e-7;

/** Per-layer tensors of one forward, for the parity check (inference only). */
export interface RanLayerTrace {
  /** [B, T, D] the windows' token outputs before the memory review. */
  preReview: tf.Tensor3D;
  /** [B, T, D] after it: the layer's output. */
  outputs: tf.Tensor3D;
  /** [B, C, D] each window's raw cell. */
  cells: tf.Tensor3D;
  /** [B, C, D] the cell fed into each window. */
  cellIn: tf.Tensor3D;
  /** [B, D] the cell after the last window (what the next window, or layer, would be fed). */
  lastCell: tf.Tensor2D;
}

export interface RanForwardOptions extends ForwardOptions {
  /** [B * D] RanNet's optional `Input-Cell` (with_cell, rannet.py:147-150): a previous text's history. */
  inputCell?: Float32Array;
  /** Keep every layer's tensors (inference only). */
  trace?: boolean;
}

export interface RanOutput extends ModelOutput {
  /** [B, D] the top cell pooled by config.json's cell_pooling (RanNet's return_cell output). */
  pooledCell: tf.Tensor2D;
  /** [B, D] the top layer's last cell (return_history): the next text's Input-Cell. */
  lastCell: tf.Tensor2D;
  /** [B, T, D] the embedding LayerNorm output (with `trace`). */
  embeddingOutput?: tf.Tensor3D;
  layers?: RanLayerTrace[];
}

/** x * sigmoid(x): Keras 'swish' (tf.nn.silu), every RAN Dense layer's activation (rannet.py:108). */
function swish(x: tf.Tensor): tf.Tensor {
  return tf.mul(x, tf.sigmoid(x));
}

/** standard_normalize (utils.py:42-47): (x − mean) / sqrt(mean(x²) + 1e-7) over the last axis. */
function standardNormalize(x: tf.Tensor): tf.Tensor {
  const mean = tf.mean(x, -1, true);
  const second = tf.mean(tf.square(x), -1, true);
  return tf.div(tf.sub(x, mean), tf.sqrt(tf.add(second, LN_EPS)));
}

/**
 * Rotary tables of a window of L rows for head size hs (SineCosinePositionEmbedding mode 'zero',
 * pe.py:189-223, applied by ran.py:61-78): cos and sin of pos · θ_j, θ_j = 1 / 10000^(2j/hs), each
 * repeated for the pair (2j, 2j+1), computed through float32 roundings as Keras computes them in
 * floatx. `sin` carries the sign of the rotated pair: −sin at 2j, +sin at 2j+1 (see applyRotary);
 * `swap` [hs, hs] is the permutation matrix that exchanges columns 2j and 2j+1.
 */
function rotaryTables(L: number, hs: number): { cos: tf.Tensor; sin: tf.Tensor; swap: tf.Tensor2D } {
  const cos = new Float32Array(L * hs);
  const sin = new Float32Array(L * hs);
  const swap = new Float32Array(hs * hs);
  for (let j = 0; j < hs / 2; j++) {
    swap[(2 * j + 1) * hs + 2 * j] = 1;
    swap[2 * j * hs + 2 * j + 1] = 1;
    const inv = Math.fround(1 / Math.fround(Math.pow(10000, Math.fround((2 * j) / hs))));
    for (let p = 0; p < L; p++) {
      const a = Math.fround(p * inv);
      cos[p * hs + 2 * j] = cos[p * hs + 2 * j + 1] = Math.cos(a);
      sin[p * hs + 2 * j] = -Math.sin(a);
      sin[p * hs + 2 * j + 1] = Math.sin(a);
    }
  }
  return { cos: tf.tensor4d(cos, [1, L, 1, hs]), sin: tf.tensor4d(sin, [1, L, 1, hs]), swap: tf.tensor2d(swap, [hs, hs]) };
}

/**
 * t [B, L, H, hs] with each pair (t[2j], t[2j+1]) rotated: t·cos + (−t[2j+1], t[2j])·sin
 * (ran.py:71-77). The partner of each column comes from a product with a permutation matrix (one
 * nonzero term per output: exact) and its sign from the signed sin table ((−a)·s = a·(−s) exactly):
 * the same floats as the transcription's stack-and-reshape, without the rank-5 slices (or gathers)
 * the wasm backend runs slowly.
 */
function applyRotary(t: tf.Tensor4D, cos: tf.Tensor, sin: tf.Tensor, swap: tf.Tensor2D): tf.Tensor {
  const hs = t.shape[3];
  const partners = tf.reshape(tf.matMul(tf.reshape(t, [-1, hs]), swap), t.shape);
  return tf.add(tf.mul(t, cos), tf.mul(partners, sin));
}

/**
 * 1 when every value of x (the whole batch's cell tensor) is 0, else 0, as a float32 scalar with no
 * gradient: Keras decides it by a tf.cond on count_nonzero, which no gradient flows through either.
 */
const allZeroIndicator = customGrad((...args: never[]) => {
  const x = args[0] as unknown as tf.Tensor;
  return {
    value: tf.tidy(() => tf.cast(tf.equal(tf.max(tf.abs(x)), 0), 'float32')),
    gradFunc: () => [tf.zerosLike(x)],
  };
}) as unknown as (x: tf.Tensor) => tf.Tensor;

/** e·m + (−1e12)(1 − m): sequence_masking (ran.py:55), m broadcast to e. */
function maskScores(e: tf.Tensor, m: tf.Tensor): tf.Tensor {
  return tf.add(tf.mul(e, m), tf.mul(tf.sub(1, m), NEG_INF));
}

export class RanModel extends AdaptableTransformerModel<RanConfig> implements AdaptableModel {
  constructor(config: RanConfig, weights: ReadonlyMap<string, InitialWeight>, dropoutSeed = 0) {
    super('rannet', config, weights, dropoutSeed);
  }

  /** Whether the checkpoint carried the apply_cell_transform head (the golden sets do; a release does not). */
  get hasCellTransform(): boolean {
    return this.params.has('rannet.output-cell-dense.weight');
  }

  protected override applyDropout(p: number): void {
    this.config.dropoutRate = p;
  }

  override linearModules(): Map<string, readonly [number, number]> {
    return ranLinearModules(this.config);
  }

  /** The windows of a padded length (./windows.ts). */
  windows(seqLen: number): RanWindow[] {
    return ranWindows(seqLen, this.config.windowSize, this.config.minWindowSize);
  }

  /** Dropout at the config's rate in training (masks from the seeded counter), else x itself. */
  private drop(x: tf.Tensor, ctx: AdapterContext): tf.Tensor {
    const rate = this.config.dropoutRate;
    return ctx.training && rate > 0 ? fusedDropout(x, rate, this.nextDropoutSeed()) : x;
  }

  /** langml LayerNorm `name` (the module's gamma and beta). */
  private layerNorm(x: tf.Tensor, name: string): tf.Tensor {
    return tf.add(tf.mul(standardNormalize(x), this.p(`${name}.gamma`)), this.p(`${name}.beta`));
  }

  /** GatedLinearUnit (ran.py:81-119): (x Wt + bt) · sigmoid(x Wg + bg). */
  private glu(x: tf.Tensor, name: string, ctx: AdapterContext): tf.Tensor {
    return tf.mul(this.linear(x, `${name}.dense-t`, ctx, true), tf.sigmoid(this.linear(x, `${name}.dense-g`, ctx, true)));
  }

  /** A swish Dense layer with bias. */
  private swishDense(x: tf.Tensor, name: string, ctx: AdapterContext): tf.Tensor {
    return swish(this.linear(x, name, ctx, true));
  }

  /**
   * One window's PosMultiHeadAttention (ran.py:255-417, 439-476): cell [B, 1, D], tokens [B, w, D],
   * keyMask [B, w] (1 = real). Returns the raw cell [B, 1, D] and the token outputs [B, w, D], both
   * standard-normalised.
   */
  private window(layer: string, cell: tf.Tensor, tokens: tf.Tensor, keyMask: tf.Tensor, ctx: AdapterContext): { cell: tf.Tensor; tokens: tf.Tensor } {
    const { headNum: H, headSize: hs } = this.config;
    const [B, w] = tokens.shape as number[];
    const L = w + 1;
    const name = `${layer}.encode-attn`;
    const z = this.drop(this.layerNorm(tf.concat([cell, tokens], 1), `${layer}.concat-layernorm`), ctx);
    const { cos, sin, swap } = rotaryTables(L, hs);
    const heads = (d: string, rotate: boolean) => {
      const t = tf.reshape(this.swishDense(z, `${name}.${d}`, ctx), [B, L, H, hs]) as tf.Tensor4D;
      return tf.transpose(rotate ? applyRotary(t, cos, sin, swap) : t, [0, 2, 1, 3]);
    };
    const q = heads('dense-q', true);
    const k = heads('dense-k', true);
    const v = heads('dense-v', false);
    // The cell is never masked (ran.py:448-450); pad keys are.
    const m = tf.reshape(tf.concat([tf.ones([B, 1]), keyMask], 1), [B, 1, 1, L]);
    const scores = maskScores(tf.div(tf.matMul(q, k, false, true), Math.sqrt(hs)), m);
    const attended = tf.reshape(tf.transpose(tf.matMul(this.drop(tf.softmax(scores, -1), ctx), v), [0, 2, 1, 3]), [B, L, H * hs]);
    const out = this.layerNorm(tf.add(this.drop(this.swishDense(attended, `${name}.dense-o`, ctx), ctx), this.glu(z, `${name}.glu`, ctx)), `${name}.layernorm`);
    const D = this.config.hiddenSize;
    return {
      tokens: this.drop(standardNormalize(tf.slice(out, [0, 1, 0], [B, w, D])), ctx),
      cell: this.drop(standardNormalize(tf.slice(out, [0, 0, 0], [B, 1, D])), ctx),
    };
  }

  /** The memory review (ran.py:158-227): tokens [B, T, D] attend over cells [B, C, D]; pad queries uniform. */
  private memoryReview(layer: string, tokens: tf.Tensor, cells: tf.Tensor, mask: tf.Tensor, ctx: AdapterContext): tf.Tensor {
    const name = `${layer}.output-attn`;
    const D = this.config.hiddenSize;
    const [B, T] = tokens.shape as number[];
    const qw = this.swishDense(tokens, `${name}.dense-q`, ctx);
    const kw = this.swishDense(cells, `${name}.dense-k`, ctx);
    const vw = this.swishDense(cells, `${name}.dense-v`, ctx);
    const scores = maskScores(tf.div(tf.matMul(qw, kw, false, true), Math.sqrt(D)), tf.reshape(mask, [B, T, 1]));
    const out = this.drop(this.swishDense(tf.matMul(this.drop(tf.softmax(scores, -1), ctx), vw), `${name}.dense-o`, ctx), ctx);
    // The GLU residual reads the projected, swished query qw (ran.py:226), not the raw tokens.
    return this.layerNorm(tf.add(out, this.glu(qw, `${name}.glu`, ctx)), `${name}.layernorm`);
  }

  /**
   * RAN layer l on the packed [B, 1 + T + C_in, D] (carried cell, tokens, the previous layer's cells,
   * unused), returning the packed [B, 1 + T + C, D] (last cell, reviewed tokens, raw cells); with
   * `trace` also the layer's other tensors.
   */
  private ranLayer(l: number, packed: tf.Tensor, mask: tf.Tensor, seqLen: number, ctx: AdapterContext, trace?: RanLayerTrace[]): tf.Tensor {
    const layer = `rannet.ran-${l}`;
    const D = this.config.hiddenSize;
    const B = packed.shape[0];
    const T = seqLen;
    let cell = tf.slice(packed, [0, 0, 0], [B, 1, D]);
    const x = tf.slice(packed, [0, 1, 0], [B, T, D]);
    // do_first_step (ran.py:488-504): a cell tensor that is zero over the whole batch is replaced by
    // the initializer's output (a tf.cond on count_nonzero of the batch), computed on the device.
    const init = this.drop(this.layerNorm(swish(this.linear(cell, `${layer}.cell-initializer`, ctx, false)), `${layer}.cell-initializer-layernorm`), ctx);
    // cell + z (init − cell) is exactly init when z = 1 (the cell is 0) and exactly the cell when z = 0.
    cell = tf.add(cell, tf.mul(allZeroIndicator(cell), tf.sub(init, cell)));
    const cellIn: tf.Tensor[] = [];
    const cells: tf.Tensor[] = [];
    const outs: tf.Tensor[] = [];
    let prevRaw: tf.Tensor | undefined;
    const windows = this.windows(T);
    // Keras runs the last window as its "final step" (no dropout on the residual cell) unless the
    // tail was merged into it, which leaves it in the window loop.
    const chunks = Math.ceil(T / this.config.windowSize);
    const finalStep = chunks >= 2 && windows.length === chunks ? windows.length - 1 : -1;
    for (const [k, [s, e]] of windows.entries()) {
      cellIn.push(cell);
      const w = this.window(layer, cell, tf.slice(x, [0, s, 0], [B, e - s, D]), tf.slice(mask, [0, s], [B, e - s]), ctx);
      outs.push(w.tokens);
      cells.push(w.cell);
      // Window 1 is fed raw_0; later windows LN_res(raw_k + GLU(raw_{k-1})) (ran.py:514-549).
      if (prevRaw === undefined) cell = w.cell;
      else {
        cell = this.layerNorm(tf.add(w.cell, this.glu(prevRaw, `${layer}.cell-glu`, ctx)), `${layer}.cell-residual-layernorm`);
        if (k !== finalStep) cell = this.drop(cell, ctx);
      }
      prevRaw = w.cell;
    }
    const preReview = outs.length === 1 ? outs[0] : tf.concat(outs, 1);
    const rawCells = cells.length === 1 ? cells[0] : tf.concat(cells, 1);
    const outputs = this.memoryReview(layer, preReview, rawCells, mask, ctx);
    if (trace) {
      trace.push({
        preReview: tf.keep(preReview) as tf.Tensor3D,
        outputs: tf.keep(tf.clone(outputs)) as tf.Tensor3D,
        cells: tf.keep(tf.clone(rawCells)) as tf.Tensor3D,
        cellIn: tf.keep(tf.concat(cellIn, 1)) as tf.Tensor3D,
        lastCell: tf.keep(tf.reshape(cell, [B, D])) as tf.Tensor2D,
      });
    }
    return tf.concat([cell, outputs, rawCells], 1);
  }

  /** TextModel's forward: the top layer's tokens and the sentence embedding (mean of the top cells) as `poolerOutput`. */
  forward(batch: TokenBatch, opts: ForwardOptions = {}): ModelOutput {
    const out = this.forwardRan(batch, opts);
    tf.dispose([out.lastCell, out.pooledCell]);
    return { lastHiddenState: out.lastHiddenState, hiddenStates: out.hiddenStates, poolerOutput: out.poolerOutput };
  }

  /**
   * The encoder on a right- or left-padded batch (computed as padded: see ./windows.ts), with an
   * optional Input-Cell and, for the parity check, every layer's tensors. The mask is `ids > 0`, as
   * RanNet's (rannet.py:91-92): [PAD] must be id 0. Tensors returned belong to the caller.
   */
  forwardRan(batch: TokenBatch, opts: RanForwardOptions = {}): RanOutput {
    const cfg = this.config;
    const { batch: B, seqLen: T } = batch;
    const D = cfg.hiddenSize;
    if (T < 1) throw new InputError('RanNet needs at least one token position (an empty batch row still needs a [PAD])');
    if (opts.inputCell && opts.inputCell.length !== B * D) throw new InputError(`Input-Cell has ${opts.inputCell.length} values, expected batch ${B} x D ${D}`);
    const training = opts.training ?? false;
    if (training && opts.trace) throw new InputError('trace is for inference only');
    const ctx = this.adapterContext(training);
    const tape = training || tf.engine().isTapeOn();
    const ids = tf.tensor2d(batch.inputIds, [B, T], 'int32');
    const mask = tf.tidy(() => tf.cast(tf.greater(ids, 0), 'float32'));
    const trace: RanLayerTrace[] | undefined = opts.trace ? [] : undefined;
    const hidden: tf.Tensor3D[] = [];
    let embeddingOutput: tf.Tensor3D | undefined;
    let packed = tf.tidy(() => {
      let h = this.layerNorm(tf.gather(this.p('rannet.token-embedding.embeddings'), ids), 'rannet.embedding-layernorm');
      if (opts.trace) embeddingOutput = tf.keep(tf.clone(h)) as tf.Tensor3D;
      if (training && cfg.dropoutRate > 0) h = fusedDropout(h, cfg.dropoutRate, this.nextDropoutSeed());
      if (opts.outputHiddenStates) hidden.push(tf.keep(tf.clone(h)) as tf.Tensor3D);
      const cell = opts.inputCell ? tf.tensor3d(opts.inputCell, [B, 1, D]) : tf.zeros([B, 1, D]);
      return tf.concat([cell, h], 1);
    });
    ids.dispose();
    try {
      for (let l = 0; l < cfg.numLayers; l++) {
        const layer = replayingDropout(this, (x: tf.Tensor, m: tf.Tensor) => tf.tidy(() => this.ranLayer(l, x, m, T, ctx, trace)));
        const next =
          tape && opts.checkpointing ? checkpoint(layer, packed, trainableUnder(this.params, `rannet.ran-${l}.`), [mask]) : layer(packed, mask);
        if (!tape) packed.dispose();
        packed = next;
        if (opts.outputHiddenStates) hidden.push(tf.tidy(() => tf.slice(packed, [0, 1, 0], [B, T, D])) as tf.Tensor3D);
      }
      const C = (packed.shape[1] as number) - 1 - T;
      const result = tf.tidy(() => {
        const lastCell = tf.reshape(tf.slice(packed, [0, 0, 0], [B, 1, D]), [B, D]) as tf.Tensor2D;
        const cells = tf.slice(packed, [0, 1 + T, 0], [B, C, D]);
        return {
          lastHiddenState: tf.slice(packed, [0, 1, 0], [B, T, D]) as tf.Tensor3D,
          lastCell,
          poolerOutput: this.poolCells(cells, lastCell, 'mean'),
          pooledCell: this.poolCells(cells, lastCell, cfg.cellPooling),
        };
      });
      return { ...result, hiddenStates: hidden, embeddingOutput, layers: trace };
    } finally {
      if (!tape) packed.dispose();
      mask.dispose();
    }
  }

  /** RanNet's return_cell (ran.py:610-616): the last cell, or the mean / max over all C raw cells, unmasked. */
  poolCells(cells: tf.Tensor, lastCell: tf.Tensor2D, pooling: RanCellPooling): tf.Tensor2D {
    return tf.tidy(() => {
      switch (pooling) {
        case 'last':
          return tf.clone(lastCell);
        case 'mean':
          return tf.mean(cells, 1) as tf.Tensor2D;
        case 'max':
          return tf.max(cells, 1) as tf.Tensor2D;
      }
    });
  }

  /**
   * The apply_cell_transform head (rannet.py:174-196) on a pooled cell [B, D] and the outputs
   * [B, T, D]: GLU(swish Dense(cell)) + Dense(max or mean of the outputs over all T, pads included).
   * Only where the checkpoint has its weights (a released one does not: Keras initialises it at random).
   */
  cellTransform(cell: tf.Tensor2D, outputs: tf.Tensor3D, pooling: 'max' | 'mean'): tf.Tensor2D {
    if (!this.hasCellTransform) throw new InputError('this RanNet checkpoint has no apply_cell_transform head (rannet/output-cell-dense, ...): a released checkpoint does not hold it');
    const ctx = this.adapterContext(false);
    return tf.tidy(() => {
      const c = this.glu(this.swishDense(cell, 'rannet.output-cell-dense', ctx), 'rannet.output-cell-glu', ctx);
      const p = pooling === 'max' ? tf.max(outputs, 1) : tf.mean(outputs, 1);
      return tf.add(c, this.linear(p, 'rannet.output-pooling-dense', ctx, true)) as tf.Tensor2D;
    });
  }
}
