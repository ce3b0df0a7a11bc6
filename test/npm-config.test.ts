/**
 * Issue 38: every npm command warned `Unknown project config "onnxruntime-node-install"` (the
 * .npmrc key that skipped onnxruntime-node's CUDA download). The skip is now package.json's
 * `allowScripts` denial, which npm 11 honours: checked with npm's own arborist on this lockfile
 * (where npm is installed the usual way), and npm run here prints no warning about project config.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { test } from 'node:test';
import { packageRoot } from '../lib/util/package-root.js';

const ROOT = packageRoot();
const npmRoot = spawnSync('npm', ['root', '-g'], { cwd: ROOT, encoding: 'utf8' });
const arboristDir = npmRoot.status === 0 ? join(npmRoot.stdout.trim(), 'npm', 'node_modules', '@npmcli', 'arborist') : '';

test('npm commands in the project print no unknown-config warning', (t) => {
  const r = spawnSync('npm', ['config', 'get', 'registry'], { cwd: ROOT, encoding: 'utf8' });
  if (r.error) return t.skip(`npm is not runnable here: ${r.error.message}`);
  assert.equal(r.status, 0, r.stderr);
  assert.doesNotMatch(r.stderr, /Unknown (project|user|env) config/);
  assert.doesNotMatch(readFileSync(join(ROOT, '.npmrc'), 'utf8'), /^\s*onnxruntime-node-install\s*=/m);
});

test("npm's arborist denies onnxruntime-node's install script under the project's allowScripts", async (t) => {
  const script = join(arboristDir, 'lib', 'script-allowed.js');
  if (!existsSync(script)) return t.skip(`npm's arborist is not at ${arboristDir}`);
  const require = createRequire(import.meta.url);
  const Arborist = require(arboristDir) as new (o: { path: string }) => { loadVirtual(): Promise<{ children: Map<string, unknown> }> };
  const { isScriptAllowed } = require(script) as { isScriptAllowed(node: unknown, policy: unknown): boolean | null };
  const tree = await new Arborist({ path: ROOT }).loadVirtual();
  const ort = tree.children.get('onnxruntime-node');
  assert.ok(ort, 'onnxruntime-node is in the lockfile');
  const policy = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { allowScripts?: unknown }).allowScripts;
  assert.equal(isScriptAllowed(ort, {}), null, 'without a policy the script would run (unreviewed)');
  assert.equal(isScriptAllowed(ort, policy), false, 'the policy denies it');
});
