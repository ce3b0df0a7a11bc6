/**
 * Issue 38: the README's library quick start, run as written — its code block typed into a fresh
 * Node REPL at the project root (no initBackend: loading the model starts the default backend),
 * with ANGLE_MODEL and ANGLE_DATA_DIR naming the shared folder's tiny BERT and data. Needs the
 * build (dist/, which `npm test` makes first); skipped, saying so, without it.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { packageRoot } from '../lib/util/package-root.js';
import { DATA_DIR, GOLDEN_DIR } from './helpers/env.js';

const ROOT = packageRoot();

/** The README's quick-start code block. */
function quickStart(): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.split(/^## /m).find((s) => s.startsWith('Library quick start'));
  assert.ok(section, 'the README has a "Library quick start" section');
  const code = /```js\n([\s\S]*?)```/.exec(section)?.[1];
  assert.ok(code, 'the section has a js code block');
  return code;
}

const skip = !existsSync(join(ROOT, 'dist', 'index.js')) ? 'needs the build (dist/; npm test builds it first)' : !GOLDEN_DIR || !DATA_DIR ? 'needs the golden tiny BERT and the data folder' : false;

/**
 * Types `lines` into a fresh `node` REPL one at a time, each after the REPL's prompt came back (a
 * line with top-level await is evaluated before the prompt returns, as when a person types it).
 */
function repl(lines: readonly string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, ['-i'], { cwd: ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let next = 0;
    let seen = 0;
    const onData = (b: Buffer) => {
      out += b.toString();
      // A prompt at the end of the output: the previous line is done; type the next one.
      const prompts = out.split('\n> ').length - 1 + (out.startsWith('> ') ? 1 : 0);
      if (prompts > seen && /> $/.test(out)) {
        seen = prompts;
        child.stdin.write(next < lines.length ? `${lines[next++]}\n` : '.exit\n');
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (b: Buffer) => (out += b.toString()));
    child.on('error', reject);
    child.on('close', () => resolvePromise(out));
  });
}

test("the README's quick start runs as written in a fresh Node REPL", { skip, timeout: 300_000 }, async () => {
  const code = quickStart();
  const lines = code.split('\n').filter((l) => l.trim());
  assert.ok(lines.length <= 10, 'ten lines at most');
  assert.doesNotMatch(code, /initBackend/);
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ANGLE_') || k === 'ANGLE_ONNX_CACHE'));
  const out = await repl([...lines, "console.log('QUICK START DONE')"], { ...env, ANGLE_MODEL: join(GOLDEN_DIR!, 'model'), ANGLE_DATA_DIR: DATA_DIR!, NODE_NO_WARNINGS: '1', NODE_DISABLE_COLORS: '1' });
  assert.doesNotMatch(out, /Uncaught|No backend found/, out);
  assert.match(out, /QUICK START DONE/, out);
  // similarity[0]: three cosines, the first 1; then a Spearman's ρ in [-1, 1].
  assert.match(out, /\[\s*(1|0\.9999\d*|1\.0000\d*),\s*-?[\d.e-]+,\s*-?[\d.e-]+\s*\]/, out);
  const rho = [...out.matchAll(/^(?:> )*(-?0\.\d+|-?1|0)$/gm)].map((m) => Number(m[1]));
  assert.ok(rho.length >= 1 && Math.abs(rho.at(-1)!) <= 1, `Spearman's ρ is printed:\n${out}`);
});
