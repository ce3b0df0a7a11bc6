/**
 * The golden parity suites `npm run parity` runs, in order. Each reads its own files from the
 * golden directory; a suite whose file is absent from a set is reported as a failed check, so
 * a partial golden set cannot pass by omission.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ParityCheck } from './check.js';
import { checkLossesGolden } from '../losses/golden.js';
import { checkForwardGolden } from './forward.js';

export const GOLDEN_SUITE_NAMES = ['forward', 'losses'] as const;
export type GoldenSuiteName = (typeof GOLDEN_SUITE_NAMES)[number];

export interface GoldenSuite {
  name: GoldenSuiteName;
  run(): Promise<ParityCheck[]>;
}

export interface GoldenSuiteOptions {
  goldenDir: string;
  /** Data root for suites that read evaluation data (eval, train). */
  dataDir?: string;
  only?: GoldenSuiteName[];
}

function needsFile(goldenDir: string, file: string, name: string, run: () => Promise<ParityCheck[]>): () => Promise<ParityCheck[]> {
  return async () => (existsSync(join(goldenDir, file)) ? run() : [{ name, ok: false, detail: `${join(goldenDir, file)} is missing` }]);
}

export function goldenSuites(o: GoldenSuiteOptions): GoldenSuite[] {
  const all: GoldenSuite[] = [
    { name: 'forward', run: needsFile(o.goldenDir, 'forward.safetensors', 'forward', () => checkForwardGolden(o.goldenDir)) },
    { name: 'losses', run: needsFile(o.goldenDir, 'losses.json', 'losses', () => checkLossesGolden(o.goldenDir)) },
  ];
  return all.filter((s) => !o.only || o.only.includes(s.name));
}
