#!/usr/bin/env node
/**
 * The test files `npm test` runs, longest first (./run-tests.mjs runs them two at a time in this
 * order; `node --test` would sort them). Alphabetically, the longest file (transfer-golden, about
 * 10 minutes) started near the end and ran alone while the other core idled (CI-like run of
 * 2026-11-28). Files not named here follow in alphabetical order. The list only orders; a file
 * missing from the folder is left out.
 *
 *   node scripts/test-files.mjs        # prints the paths, one per line
 */
import { existsSync, readdirSync } from 'node:fs';

// Measured in CI runs on the 2-core machine (seconds, longest first).
const LONGEST_FIRST = [
  'test/transfer-golden.test.ts', // SentEval's protocol, 3,000+ capped lbfgs fits (~600-790)
  'test/slurm.test.ts', // a plain run and a Slurm job array of the plan fixture (~200)
  'test/jupyter-live.test.ts', // a live Jupyter in Chromium (70-200)
  'test/table-notebooks.test.ts', // notebook 04 run twice (~160)
  'test/transfer-run.test.ts', // SentEval transfer rows (~130)
  'test/trainer.test.ts', // (~115)
  'test/cuda-emulated-model.test.ts', // golden replay through the emulated cuda addon (~105)
  'test/train-golden.test.ts', // three golden training runs on cpu (~100)
  'test/blocked-attention.test.ts', // (~95)
  'test/newcomer.test.ts', // the README's commands on a fresh copy (~90)
  'test/bf16-parity.test.ts', // (~80)
  'test/notebook-workers.test.ts', // (~75)
  'test/readme-quick-start-notebook.test.ts', // (~60)
];

/** Every test/*.test.ts, the longest named above first, the rest alphabetically. */
export function testFiles() {
  const all = readdirSync('test')
    .filter((f) => f.endsWith('.test.ts'))
    .map((f) => `test/${f}`)
    .sort();
  const first = LONGEST_FIRST.filter((f) => existsSync(f));
  const rest = all.filter((f) => !first.includes(f));
  return [...first, ...rest];
}

if (import.meta.url === `file://${process.argv[1]}`) process.stdout.write(testFiles().join('\n') + '\n');
