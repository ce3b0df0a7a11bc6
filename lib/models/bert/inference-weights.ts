/**
 * Inference copies of BERT's dense weights. PyTorch stores a linear layer's weight as [out, in]
 * and the model computes x·Wᵀ; tfjs's wasm backend has a fast matMul (XNNPACK) only for
 * untransposed operands, so on backends without a free transposed matMul every linear layer needs
 * Wᵀ as a tensor of its own. Training transposes inside the pass (the gradient flows through the
 * transpose); inference keeps one transposed copy per weight instead of redoing it on every call
 * (19% of wasm's time on BERT-base), refreshed when the weight changes: a tf.Variable gets a new
 * dataId on every assign (tfjs-core Variable.assign), so a copy made from another dataId is stale.
 *
 * The copies cost memory: the dense weights once more (0.78× BERT-base's parameters) and, on wasm,
 * XNNPACK's packed form of each once more, which tf.memory() does not count. Where that would not
 * fit comfortably in the backend's memory limit (half of wasm's 4 GiB heap; BERT-large does not
 * fit), each block transposes the weights it uses and releases them with its intermediates.
 */
import { tf, backendCapabilities } from '../../backend/index.js';
import { tensorMemoryLimitBytes } from '../inference-memory.js';
import type { BertConfig } from './config.js';

/** A linear layer's weight as the forward pass should use it: W as stored, or Wᵀ already transposed. */
export type DenseWeight = (prefix: string) => { w: tf.Tensor; transposed: boolean };

/** Prefixes of every dense layer of the encoder (what inference copies). */
export function bertDensePrefixes(cfg: BertConfig, withPooler: boolean): string[] {
  const out: string[] = [];
  for (let l = 0; l < cfg.numLayers; l++) {
    const p = `encoder.layer.${l}.`;
    out.push(`${p}attention.self.query`, `${p}attention.self.key`, `${p}attention.self.value`, `${p}attention.output.dense`, `${p}intermediate.dense`, `${p}output.dense`);
  }
  if (withPooler) out.push('pooler.dense');
  return out;
}

export class InferenceWeights {
  private readonly copies = new Map<string, { source: object; t: tf.Tensor }>();

  /** The dense weights for one inference forward of a model with these parameters. */
  dense(params: ReadonlyMap<string, tf.Variable>, cfg: BertConfig): DenseWeight {
    const stored: DenseWeight = (prefix) => ({ w: weightOf(params, prefix), transposed: false });
    if (backendCapabilities().matMulTransposeIsFree || !this.fits(params, cfg)) {
      this.clear();
      return stored;
    }
    return (prefix) => {
      const v = weightOf(params, prefix);
      const source = (v as unknown as { dataId: object }).dataId;
      const copy = this.copies.get(prefix);
      if (copy && copy.source === source) return { w: copy.t, transposed: true };
      copy?.t.dispose();
      // tf.keep: the copy outlives the tf.tidy of the block that first asks for it.
      const t = tf.keep(tf.transpose(v));
      this.copies.set(prefix, { source, t });
      return { w: t, transposed: true };
    };
  }

  /** Whether the copies (and wasm's packed forms of them) fit in half the backend's memory limit. */
  private fits(params: ReadonlyMap<string, tf.Variable>, cfg: BertConfig): boolean {
    const limit = tensorMemoryLimitBytes();
    if (limit === undefined) return true;
    let dense = 0;
    for (const prefix of bertDensePrefixes(cfg, params.has('pooler.dense.weight'))) dense += 4 * weightOf(params, prefix).size;
    let held = 0;
    for (const c of this.copies.values()) held += c.t.size * 4;
    return tf.memory().numBytes - held + 2 * dense <= limit / 2;
  }

  /** Bytes the copies hold now. */
  bytes(): number {
    let n = 0;
    for (const c of this.copies.values()) n += 4 * c.t.size;
    return n;
  }

  /** Frees every copy (training, dispose). */
  clear(): void {
    for (const c of this.copies.values()) c.t.dispose();
    this.copies.clear();
  }
}

function weightOf(params: ReadonlyMap<string, tf.Variable>, prefix: string): tf.Variable {
  const v = params.get(`${prefix}.weight`);
  if (!v) throw new Error(`BERT parameter '${prefix}.weight' is not loaded`);
  return v;
}
