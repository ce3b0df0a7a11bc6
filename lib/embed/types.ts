/** A row-major float32 matrix of sentence embeddings: row i is the embedding of input i. */
export interface Embeddings {
  data: Float32Array;
  rows: number;
  dim: number;
}

export interface EncodeOptions {
  /** Show a progress line on stderr (default: only for long lists). */
  progress?: boolean;
}

/**
 * Anything that turns texts into one embedding each, in input order: a BERT with a pooling
 * strategy, a prompt-based LLM encoder, a bag of word vectors. Evaluators take this interface,
 * so they do not know or care which model is behind it.
 */
export interface SentenceEncoder {
  encode(texts: string[], opts?: EncodeOptions): Promise<Embeddings>;
}

/** Row i of an embedding matrix (a view, not a copy). */
export function row(e: Embeddings, i: number): Float32Array {
  return e.data.subarray(i * e.dim, (i + 1) * e.dim);
}
