/**
 * Argument errors come before any build step or model load, through the npm scripts a person
 * types: `npm run notebooks -- <unknown name>` used to build lib/ first (its npm script ran
 * `npm run build &&`) and only then say the name was unknown; the build now runs inside the
 * command, after its arguments are checked. Each case asserts the exit status (2), the one line
 * ending in "(see --help)", and that nothing was built or started — never a time.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, test } from 'node:test';
import { packageRoot } from '../lib/util/package-root.js';

const ROOT = packageRoot();

function npmRun(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ANGLE_') || k === 'ANGLE_ONNX_CACHE' || k === 'ANGLE_SHARED_DIR'));
  const r = spawnSync('npm', ['run', '--silent', ...args], { cwd: ROOT, encoding: 'utf8', env });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('argument errors before any build or model load', { concurrency: 2 }, () => {
  const cases: Array<{ args: string[]; line: RegExp; never: RegExp }> = [
    {
      args: ['notebooks', '--', 'nonexistent'],
      line: /^notebooks: no notebook named or starting with "nonexistent" in notebooks; available: 00-encode-and-compare, .* \(see --help\)$/,
      never: /building lib\/|running \d+ notebook/,
    },
    { args: ['notebooks', '--', '00', '--preset', 'tiny'], line: /^notebooks: unknown preset 'tiny': expected one of smoke, paper, rehearsal \(see --help\)$/, never: /building lib\/|running \d+ notebook/ },
    { args: ['jupyter', '--', '--port', 'eighty'], line: /^jupyter: --port expects an integer from 1 to 65535, got 'eighty' \(see --help\)$/, never: /building lib\/|starting .*jupyter|registered the tslab kernel/ },
    { args: ['export', '--', '--model', 'some/model', '--out', 'build/never-written', '--pooling', 'mean-ish'], line: /^export: unknown pooling 'mean-ish': expected one of .* \(see --help\)$/, never: /^backend:|export: wrote/m },
    { args: ['train', '--', '--task', 'stsb', '--steps', '3'], line: /^train: Unknown option '--steps' \(see --help\)$/, never: /^backend:|train: task/m },
  ];
  for (const c of cases) {
    test(`npm run ${c.args.join(' ')}`, () => {
      const r = npmRun(c.args);
      assert.equal(r.status, 2, `exit status\n${r.stdout}\n${r.stderr}`);
      const lines = r.stderr.trim().split('\n');
      assert.equal(lines.length, 1, `one line on stderr:\n${r.stderr}`);
      assert.match(lines[0]!, c.line);
      assert.doesNotMatch(r.stdout + r.stderr, c.never);
    });
  }
});
