/**
 * The llama2.c decoder golden set for the decoder tests (where it is: ./env.ts DECODER_GOLDEN_DIR).
 * Tests that need it skip with a printed reason when it is not there.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DECODER_GOLDEN_DIR } from './env.js';

export { DECODER_GOLDEN_DIR };

export function decoderGoldenOrSkip(t: { skip: (msg: string) => void }): string | undefined {
  if (DECODER_GOLDEN_DIR && existsSync(join(DECODER_GOLDEN_DIR, 'golden.json'))) return DECODER_GOLDEN_DIR;
  t.skip('no decoder golden set: set ANGLE_DECODER_GOLDEN_DIR or ANGLE_SHARED_DIR (../shared/golden/llama2c-stories260K)');
  return undefined;
}

export interface DecoderGoldenPrompt {
  text: string;
  ids: number[];
  logits: number[][];
  hidden: number[][];
  greedy_ids: number[];
  greedy_text: string;
}

export function readDecoderGolden(dir: string): { config: Record<string, number>; prompts: DecoderGoldenPrompt[] } {
  return JSON.parse(readFileSync(join(dir, 'golden.json'), 'utf8'));
}
