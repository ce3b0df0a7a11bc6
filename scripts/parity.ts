/**
 * npm run parity -- --golden <dir> [--data <dir>] [--backend cpu] [--only forward,losses,eval,train]
 *
 * Checks this implementation against a golden reference directory (layout:
 * ../shared/golden/README.md): one line per check, then `parity: N passed, M failed`; exits 1
 * on any failure. <dir> is one golden set (it has forward.json) or a folder of sets.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { initBackend } from '../lib/backend/index.js';
import { envConfig } from '../lib/config.js';
import { goldenSuites, type GoldenSuiteName, GOLDEN_SUITE_NAMES } from '../lib/parity/suites.js';
import type { ParityCheck } from '../lib/parity/check.js';

const { values } = parseArgs({
  options: {
    golden: { type: 'string' },
    data: { type: 'string' },
    backend: { type: 'string' },
    only: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  },
});

if (values.help) {
  console.log('usage: npm run parity -- --golden <dir> [--data <dir>] [--backend cpu|wasm|cuda|tensorflow] [--only ' + GOLDEN_SUITE_NAMES.join(',') + ']');
  process.exit(0);
}

const env = envConfig();
const goldenArg = values.golden ?? env.goldenDir;
if (!goldenArg) {
  console.error('parity: give a golden directory with --golden <dir> (or set ANGLE_GOLDEN_DIR)');
  process.exit(2);
}
if (!existsSync(goldenArg) || !statSync(goldenArg).isDirectory()) {
  console.error(`parity: ${goldenArg}: not a directory`);
  process.exit(2);
}

/** One golden set, or every subdirectory that is one. */
function goldenSets(dir: string): string[] {
  if (existsSync(join(dir, 'forward.json'))) return [resolve(dir)];
  const sets = readdirSync(dir)
    .map((d) => join(dir, d))
    .filter((d) => statSync(d).isDirectory() && existsSync(join(d, 'forward.json')))
    .sort();
  if (sets.length === 0) {
    console.error(`parity: ${dir}: no forward.json in it or in any subdirectory; expected the layout of shared/golden/README.md`);
    process.exit(2);
  }
  return sets.map((s) => resolve(s));
}

const only = values.only ? (values.only.split(',').map((s) => s.trim()) as GoldenSuiteName[]) : undefined;
for (const o of only ?? []) {
  if (!GOLDEN_SUITE_NAMES.includes(o)) {
    console.error(`parity: unknown suite '${o}' in --only: expected ${GOLDEN_SUITE_NAMES.join(', ')}`);
    process.exit(2);
  }
}

await initBackend(values.backend);
let passed = 0;
let failed = 0;
const report = (set: string, c: ParityCheck) => {
  if (c.ok) passed++;
  else failed++;
  console.log(`${c.ok ? 'PASS' : 'FAIL'} ${set} ${c.name}: ${c.detail}`);
};
for (const dir of goldenSets(goldenArg)) {
  const set = dir.split('/').pop()!;
  for (const suite of goldenSuites({ goldenDir: dir, dataDir: values.data ?? env.dataDir, only, log: (l) => console.error(`     ${l}`) })) {
    const t0 = Date.now();
    try {
      for (const c of await suite.run()) report(set, c);
    } catch (e) {
      report(set, { name: `${suite.name}`, ok: false, detail: `error: ${(e as Error).message}` });
    }
    console.log(`     ${set} ${suite.name}: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  }
}
console.log(`parity: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 && passed > 0 ? 0 : 1);
