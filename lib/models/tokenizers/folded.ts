/**
 * A tokenizer whose ids are folded into a smaller vocabulary (id mod vocab): the same token counts
 * and shapes as the inner tokenizer, every id in [0, vocab). The rehearsal counts a decoder's
 * tokens with GPT-2's BPE this way when the decoder's own tokenizer is not on the machine (see the
 * decoders' registry entries, ../llama/architecture.ts and ../opt/architecture.ts).
 */
import type { BatchOptions, EncodedText, TextTokenizer, TokenBatch } from '../types.js';

export class FoldedTokenizer implements TextTokenizer {
  constructor(
    private readonly inner: TextTokenizer,
    private readonly vocab: number,
  ) {}
  get padId(): number {
    return this.inner.padId % this.vocab;
  }
  get padSide(): 'right' | 'left' {
    return this.inner.padSide;
  }
  encode(text: string, pair?: string | null, maxLength?: number): EncodedText {
    const e = this.inner.encode(text, pair, maxLength);
    return { ...e, ids: e.ids.map((id) => id % this.vocab) };
  }
  encodeBatch(inputs: Array<string | [string, string]>, opts?: BatchOptions): TokenBatch {
    return this.folded(this.inner.encodeBatch(inputs, opts));
  }
  pad(rows: EncodedText[], opts?: BatchOptions): TokenBatch {
    return this.folded(this.inner.pad(rows, opts));
  }
  /** The inner tokenizer's text of the ids (a folded id decodes as the lower id it became: another word, the same count). */
  decode(ids: readonly number[]): string {
    if (!this.inner.decode) throw new Error('the rehearsal tokenizer cannot decode');
    return this.inner.decode(ids);
  }
  private folded(b: TokenBatch): TokenBatch {
    return { ...b, inputIds: b.inputIds.map((id) => id % this.vocab) };
  }
}
