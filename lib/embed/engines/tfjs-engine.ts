/**
 * The tfjs inference engine: the model's own forward pass (training off) on the active tfjs
 * backend. A batch whose activations would not fit is split into row chunks that each stay under a
 * bound in padded tokens, and the chunks' outputs are concatenated: rows of a padded batch are
 * computed independently, so the result equals the one-batch result (the chunks keep the batch's
 * padded length, so even `max` pooling, which sees padding as 0, does not change).
 *
 * The bound: `maxPaddedTokens` (option, else ANGLE_TFJS_MAX_TOKENS), else what fits in an
 * activation budget of 128 MiB — less where the backend's memory limit (wasm: 4 GiB) leaves less:
 * a quarter of what is left after the tensors already alive — at the model's estimate of one
 * layer's activations per padded token (BertModel.inferenceActivationBytes), or 64 floats per
 * hidden unit per token for models without an estimate. 128 MiB is about 1,100 padded tokens of
 * BERT-base: XNNPACK's matmuls run at full speed from a few hundred rows, so the split costs no
 * throughput, and the activations stay a small part of the weights.
 */
import { tf } from '../../backend/index.js';
import { tensorMemoryLimitBytes } from '../../models/inference-memory.js';
import type { TextModel, TokenBatch } from '../../models/types.js';
import { InputError } from '../../util/errors.js';
import type { EngineOutput, EngineRunOptions, InferenceEngine } from './types.js';

export const DEFAULT_ACTIVATION_BUDGET_BYTES = 128 * 2 ** 20;

export interface TfjsEngineOptions {
  /** Most padded tokens (rows × padded length) one forward pass may take; default from the memory budget. */
  maxPaddedTokens?: number;
  /** 'fused': attention as one kernel where the backend has it (cuda), for models that implement it (ForwardOptions.attention). */
  attention?: 'plain' | 'fused';
}

/** A model that can say how many bytes of activations an inference forward of a batch holds at its peak. */
interface ActivationEstimate {
  inferenceActivationBytes(batch: number, seqLen: number, outputHiddenStates?: boolean): number;
}

function hasEstimate(m: TextModel): m is TextModel & ActivationEstimate {
  return typeof (m as Partial<ActivationEstimate>).inferenceActivationBytes === 'function';
}

function parseTokenBound(v: number | string, where: string): number {
  const n = typeof v === 'number' ? v : Number(v);
  if (!Number.isInteger(n) || n < 1) throw new InputError(`${where} must be a positive integer (padded tokens per forward pass), got ${JSON.stringify(v)}`);
  return n;
}

export class TfjsEngine implements InferenceEngine {
  readonly name = 'tfjs' as const;
  private readonly fixedBound?: number;
  private readonly attention?: 'plain' | 'fused';

  constructor(
    private readonly model: TextModel,
    opts: TfjsEngineOptions = {},
  ) {
    if (opts.attention !== undefined && opts.attention !== 'plain' && opts.attention !== 'fused') throw new InputError(`tfjs engine: attention '${opts.attention as string}': expected plain or fused`);
    this.attention = opts.attention;
    if (opts.maxPaddedTokens !== undefined) this.fixedBound = parseTokenBound(opts.maxPaddedTokens, 'maxPaddedTokens');
    else if (process.env.ANGLE_TFJS_MAX_TOKENS?.trim()) this.fixedBound = parseTokenBound(process.env.ANGLE_TFJS_MAX_TOKENS.trim(), 'ANGLE_TFJS_MAX_TOKENS');
  }

  get description(): string {
    return `tfjs ${tf.getBackend()} (tfjs-core ${tf.version_core})`;
  }

  /** Padded tokens one forward pass may take for rows of this length. */
  maxPaddedTokens(seqLen: number, hiddenStates = false): number {
    if (this.fixedBound !== undefined) return this.fixedBound;
    const perToken = hasEstimate(this.model)
      ? this.model.inferenceActivationBytes(1, seqLen, hiddenStates) / seqLen
      : 4 * 64 * this.model.hiddenSize;
    let budget = DEFAULT_ACTIVATION_BUDGET_BYTES;
    const limit = tensorMemoryLimitBytes();
    if (limit !== undefined) budget = Math.min(budget, (limit - tf.memory().numBytes) / 4);
    return Math.max(seqLen, Math.floor(budget / perToken));
  }

  async run(batch: TokenBatch, opts: EngineRunOptions): Promise<EngineOutput> {
    const rowsPerChunk = Math.max(1, Math.floor(this.maxPaddedTokens(batch.seqLen, opts.hiddenStates) / batch.seqLen));
    if (rowsPerChunk >= batch.batch) return this.forward(batch, opts);
    const parts: EngineOutput[] = [];
    try {
      for (let r = 0; r < batch.batch; r += rowsPerChunk) {
        parts.push(this.forward(rowSlice(batch, r, Math.min(batch.batch, r + rowsPerChunk)), opts));
        // One chunk at a time, and the event loop breathes between them.
        await new Promise((res) => setImmediate(res));
      }
      const cat = <T extends tf.Tensor>(ts: T[]): T => tf.concat(ts, 0) as T;
      const hiddenStates = opts.hiddenStates ? parts[0].hiddenStates.map((_, i) => cat(parts.map((p) => p.hiddenStates[i]))) : [];
      return {
        lastHiddenState: opts.hiddenStates ? hiddenStates[hiddenStates.length - 1] : cat(parts.map((p) => p.lastHiddenState)),
        hiddenStates,
        poolerOutput: parts[0].poolerOutput ? cat(parts.map((p) => p.poolerOutput!)) : undefined,
      };
    } finally {
      for (const p of parts) tf.dispose([p.lastHiddenState, ...p.hiddenStates, ...(p.poolerOutput ? [p.poolerOutput] : [])]);
    }
  }

  private forward(batch: TokenBatch, opts: EngineRunOptions): EngineOutput {
    return forwardToLayer(this.model, batch, opts, this.attention);
  }

  async dispose(): Promise<void> {}
}

/**
 * The model's own forward pass as an engine returns it, cut at `opts.layers` where that is below
 * the top: the tfjs forward has no early exit, so it computes every layer and keeps
 * hidden_states[layers] (the ONNX engines export a graph that ends there instead).
 */
export function forwardToLayer(model: Pick<TextModel, 'forward' | 'numLayers'>, batch: TokenBatch, opts: EngineRunOptions, attention?: 'plain' | 'fused'): EngineOutput {
  const cut = opts.layers !== undefined && opts.layers < model.numLayers ? opts.layers : undefined;
  const o = model.forward(batch, { training: false, outputHiddenStates: opts.hiddenStates || cut !== undefined, ...(attention ? { attention } : {}) });
  if (cut === undefined) return { lastHiddenState: o.lastHiddenState, hiddenStates: o.hiddenStates, poolerOutput: o.poolerOutput };
  const states = o.hiddenStates[cut];
  if (!states) throw new InputError(`the model returned ${o.hiddenStates.length} hidden states, none at layer ${cut}`);
  const hiddenStates = opts.hiddenStates ? o.hiddenStates.slice(0, cut + 1) : [];
  const kept = new Set<tf.Tensor>([states, ...hiddenStates]);
  tf.dispose([o.lastHiddenState, ...o.hiddenStates, ...(o.poolerOutput ? [o.poolerOutput] : [])].filter((t) => !kept.has(t)));
  return { lastHiddenState: states, hiddenStates };
}

/** Rows [from, to) of a padded batch, at the batch's padded length. */
export function rowSlice(b: TokenBatch, from: number, to: number): TokenBatch {
  const T = b.seqLen;
  return {
    inputIds: b.inputIds.slice(from * T, to * T),
    attentionMask: b.attentionMask.slice(from * T, to * T),
    tokenTypeIds: b.tokenTypeIds.slice(from * T, to * T),
    batch: to - from,
    seqLen: T,
  };
}
