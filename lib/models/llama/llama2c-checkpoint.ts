/**
 * Reading llama2.c checkpoints (karpathy/llama2.c, `run.c`'s "legacy" format, what its
 * `export.py --version 0` and the tinyllamas files are):
 *
 *   header: 7 int32 little-endian  dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len
 *           (vocab_size < 0 means the classifier is stored separately: an untied head)
 *   float32 weights, in this order (PyTorch [out, in] layout, all layers of one kind together):
 *     token_embedding [vocab, dim]; rms_att [L, dim]; wq [L, dim, dim]; wk [L, kv_dim, dim];
 *     wv [L, kv_dim, dim]; wo [L, dim, dim]; rms_ffn [L, dim]; w1 [L, hidden, dim];
 *     w2 [L, dim, hidden]; w3 [L, hidden, dim]; rms_final [dim];
 *     freq_cis_real, freq_cis_imag [seq_len, head_size/2] (unused: recomputed);
 *     wcls [vocab, dim] only when untied
 *
 * with kv_dim = dim · n_kv_heads / n_heads. The weights become LlamaForCausalLM's (w1 = gate_proj,
 * w3 = up_proj, w2 = down_proj), RMSNorm eps 1e-5 and RoPE θ 10000 as run.c hard-codes them.
 *
 * Rotary layout: llama2.c rotates interleaved pairs (2i, 2i+1) of each head, HF's LLaMA rotates
 * halves (i, i + head_size/2). The query and key rows of each head are therefore permuted into
 * HF's order (row i of the first half <- llama2.c row 2i, of the second half <- row 2i+1), the
 * inverse of what llama2.c's export.py does when it writes HF checkpoints; attention scores are
 * unchanged because q and k are permuted alike.
 *
 * The newer versioned exports (magic "ak42") are refused with a message saying so.
 */
import { openSync, readSync, closeSync, readdirSync, readFileSync, statSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { InputError } from '../../util/errors.js';
import type { LlamaConfig } from './config.js';
import type { WeightTensor } from './weights.js';

/** The checkpoint header, as llama2.c's `Config`. */
export interface Llama2cHeader {
  dim: number;
  hiddenDim: number;
  nLayers: number;
  nHeads: number;
  nKvHeads: number;
  vocabSize: number;
  seqLen: number;
  /** The classifier is the token embedding (vocab_size > 0 in the file). */
  sharedClassifier: boolean;
}

const HEADER_BYTES = 28;
/** "ak42" little-endian: the magic of llama2.c's versioned exports (export.py --version 1/2). */
const VERSIONED_MAGIC = 0x616b3432;

/** Floats the weights take after the header, for a header. */
export function llama2cFloatCount(h: Llama2cHeader): number {
  const headSize = h.dim / h.nHeads;
  const kvDim = headSize * h.nKvHeads;
  const L = h.nLayers;
  return (
    h.vocabSize * h.dim +
    L * h.dim +
    L * h.dim * h.dim +
    2 * L * kvDim * h.dim +
    L * h.dim * h.dim +
    L * h.dim +
    3 * L * h.hiddenDim * h.dim +
    h.dim +
    h.seqLen * headSize +
    (h.sharedClassifier ? 0 : h.vocabSize * h.dim)
  );
}

/** Parses and checks a header; `fileBytes` is the file's size, which must match it exactly. */
export function parseLlama2cHeader(buf: Uint8Array, fileBytes: number, file: string): Llama2cHeader {
  if (buf.byteLength < HEADER_BYTES) throw new InputError(`not a llama2.c checkpoint: ${buf.byteLength} bytes, shorter than the 28-byte header`, { file });
  const dv = new DataView(buf.buffer, buf.byteOffset, HEADER_BYTES);
  const ints = Array.from({ length: 7 }, (_, i) => dv.getInt32(i * 4, true));
  if (dv.getUint32(0, true) === VERSIONED_MAGIC) {
    throw new InputError(`a versioned llama2.c export (magic "ak42", version ${ints[1]}); only the legacy format run.c reads is supported: export with --version 0`, { file });
  }
  const [dim, hiddenDim, nLayers, nHeads, nKvHeads, vocab, seqLen] = ints;
  const h: Llama2cHeader = { dim, hiddenDim, nLayers, nHeads, nKvHeads, vocabSize: Math.abs(vocab), seqLen, sharedClassifier: vocab > 0 };
  const problems: string[] = [];
  for (const [k, v] of [['dim', dim], ['hidden_dim', hiddenDim], ['n_layers', nLayers], ['n_heads', nHeads], ['n_kv_heads', nKvHeads], ['seq_len', seqLen]] as const) {
    if (!(v > 0)) problems.push(`${k} ${v} is not positive`);
  }
  if (vocab === 0) problems.push('vocab_size is 0');
  if (problems.length === 0) {
    if (dim % nHeads !== 0) problems.push(`dim ${dim} is not a multiple of n_heads ${nHeads}`);
    else if ((dim / nHeads) % 2 !== 0) problems.push(`head size ${dim / nHeads} is odd`);
    if (nHeads % nKvHeads !== 0) problems.push(`n_heads ${nHeads} is not a multiple of n_kv_heads ${nKvHeads}`);
  }
  if (problems.length > 0) throw new InputError(`not a llama2.c checkpoint header (${ints.join(', ')}): ${problems.join('; ')}`, { file });
  const want = HEADER_BYTES + 4 * llama2cFloatCount(h);
  if (fileBytes !== want) {
    throw new InputError(
      `llama2.c checkpoint size ${fileBytes} bytes does not match its header (dim ${dim}, hidden ${hiddenDim}, ${nLayers} layers, ${nHeads}/${nKvHeads} heads, ` +
        `vocab ${h.vocabSize} ${h.sharedClassifier ? 'shared' : 'separate'} classifier, seq_len ${seqLen}: ${want} bytes); truncated or not fp32 legacy format?`,
      { file },
    );
  }
  return h;
}

/** Reads just the header of a file and checks it against the file size; undefined if it is not one. */
export function probeLlama2cCheckpoint(path: string): Llama2cHeader | undefined {
  try {
    const fd = openSync(path, 'r');
    try {
      const buf = new Uint8Array(HEADER_BYTES);
      if (readSync(fd, buf, 0, HEADER_BYTES, 0) < HEADER_BYTES) return undefined;
      return parseLlama2cHeader(buf, statSync(path).size, path);
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
}

/** The LlamaConfig of a llama2.c checkpoint: run.c's constants (eps 1e-5, θ 10000), BOS 1, EOS 2. */
export function llama2cConfig(h: Llama2cHeader): LlamaConfig {
  return {
    vocabSize: h.vocabSize,
    hiddenSize: h.dim,
    intermediateSize: h.hiddenDim,
    numLayers: h.nLayers,
    numHeads: h.nHeads,
    numKvHeads: h.nKvHeads,
    headDim: h.dim / h.nHeads,
    maxPositions: h.seqLen,
    rmsNormEps: 1e-5,
    ropeTheta: 10000,
    ropeLinearScale: 1,
    tieWordEmbeddings: h.sharedClassifier,
    attentionDropout: 0,
    bosTokenId: 1,
    eosTokenId: [2],
    padTokenId: null,
  };
}

/**
 * Rows of a [heads · headSize, in] projection from llama2.c's interleaved rotary order to HF's
 * half order: within each head, HF row j (j < headSize/2) is row 2j, HF row headSize/2 + j is 2j+1.
 */
export function interleavedToHalfRows(w: Float32Array, heads: number, headSize: number, inDim: number): Float32Array {
  const out = new Float32Array(w.length);
  const half = headSize / 2;
  for (let h = 0; h < heads; h++) {
    for (let j = 0; j < half; j++) {
      for (const r of [0, 1]) {
        const src = (h * headSize + 2 * j + r) * inDim;
        const dst = (h * headSize + r * half + j) * inDim;
        out.set(w.subarray(src, src + inDim), dst);
      }
    }
  }
  return out;
}

export interface Llama2cCheckpoint {
  header: Llama2cHeader;
  config: LlamaConfig;
  /** Weights under LlamaForCausalLM names, query/key rows in HF's rotary layout. */
  weights: Map<string, WeightTensor>;
}

/** Reads a llama2.c `.bin` checkpoint into HF-named weights. */
export function readLlama2cCheckpoint(path: string): Llama2cCheckpoint {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (e) {
    throw new InputError(`cannot read llama2.c checkpoint (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`, { file: path });
  }
  const header = parseLlama2cHeader(bytes, bytes.byteLength, path);
  // Copy into an aligned Float32Array (a Buffer's offset need not be a multiple of 4).
  const floats = new Float32Array(llama2cFloatCount(header));
  new Uint8Array(floats.buffer).set(bytes.subarray(HEADER_BYTES));
  const { dim, hiddenDim, nLayers: L, nHeads, nKvHeads, vocabSize } = header;
  const headSize = dim / nHeads;
  const kvDim = headSize * nKvHeads;
  let offset = 0;
  const take = (n: number): Float32Array => {
    const a = floats.subarray(offset, offset + n);
    offset += n;
    return a;
  };
  /** L consecutive [rows, cols] matrices. */
  const perLayer = (rows: number, cols: number) => Array.from({ length: L }, () => take(rows * cols));
  const embed = take(vocabSize * dim);
  const rmsAtt = perLayer(1, dim);
  const wq = perLayer(dim, dim);
  const wk = perLayer(kvDim, dim);
  const wv = perLayer(kvDim, dim);
  const wo = perLayer(dim, dim);
  const rmsFfn = perLayer(1, dim);
  const w1 = perLayer(hiddenDim, dim);
  const w2 = perLayer(dim, hiddenDim);
  const w3 = perLayer(hiddenDim, dim);
  const rmsFinal = take(dim);
  take(header.seqLen * headSize); // freq_cis_real, freq_cis_imag: recomputed from θ
  const wcls = header.sharedClassifier ? undefined : take(vocabSize * dim);

  const weights = new Map<string, WeightTensor>();
  const put = (name: string, data: Float32Array, shape: number[]) => weights.set(name, { shape, data: data.slice() });
  put('model.embed_tokens.weight', embed, [vocabSize, dim]);
  for (let l = 0; l < L; l++) {
    const p = `model.layers.${l}.`;
    put(`${p}input_layernorm.weight`, rmsAtt[l], [dim]);
    weights.set(`${p}self_attn.q_proj.weight`, { shape: [dim, dim], data: interleavedToHalfRows(wq[l], nHeads, headSize, dim) });
    weights.set(`${p}self_attn.k_proj.weight`, { shape: [kvDim, dim], data: interleavedToHalfRows(wk[l], nKvHeads, headSize, dim) });
    put(`${p}self_attn.v_proj.weight`, wv[l], [kvDim, dim]);
    put(`${p}self_attn.o_proj.weight`, wo[l], [dim, dim]);
    put(`${p}post_attention_layernorm.weight`, rmsFfn[l], [dim]);
    put(`${p}mlp.gate_proj.weight`, w1[l], [hiddenDim, dim]);
    put(`${p}mlp.down_proj.weight`, w2[l], [dim, hiddenDim]);
    put(`${p}mlp.up_proj.weight`, w3[l], [hiddenDim, dim]);
  }
  put('model.norm.weight', rmsFinal, [dim]);
  if (wcls) put('lm_head.weight', wcls, [vocabSize, dim]);
  return { header, config: llama2cConfig(header), weights };
}

/** The files of a llama2.c model folder: its checkpoint and its tokenizer. */
export interface Llama2cFiles {
  checkpoint: string;
  tokenizer: string;
}

/**
 * Whether `dir` is a llama2.c model folder, and its files: no config.json, exactly one `.bin`
 * whose header matches its size (the checkpoint), and a tokenizer `.bin` beside it (`tokenizer.bin`,
 * else the one other `.bin`). Undefined when the folder is not one.
 */
export function findLlama2cFiles(dir: string): Llama2cFiles | undefined {
  if (!existsSync(dir) || !statSync(dir).isDirectory() || existsSync(join(dir, 'config.json'))) return undefined;
  const bins = readdirSync(dir).filter((f) => f.endsWith('.bin')).sort();
  const checkpoints = bins.filter((f) => probeLlama2cCheckpoint(join(dir, f)) !== undefined);
  if (checkpoints.length === 0) return undefined;
  if (checkpoints.length > 1) throw new InputError(`a llama2.c folder with more than one checkpoint (${checkpoints.join(', ')}); load one with readLlama2cCheckpoint`, { file: dir });
  const others = bins.filter((f) => f !== checkpoints[0]);
  const tokenizer = others.includes('tokenizer.bin') ? 'tokenizer.bin' : others.length === 1 ? others[0] : undefined;
  if (!tokenizer) {
    throw new InputError(
      `llama2.c checkpoint ${checkpoints[0]} has no tokenizer beside it: expected tokenizer.bin or exactly one other .bin (found ${others.length ? others.join(', ') : 'none'})`,
      { file: dir },
    );
  }
  return { checkpoint: join(dir, checkpoints[0]), tokenizer: join(dir, tokenizer) };
}
