/**
 * Issue 38: `npm run portable-records -- --check` printed nothing when every record was portable,
 * so a passing check looked like a command that did not run. It now always ends with one summary
 * line: how many records it checked, where, and how many hold an absolute path (exit 1 then).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { packageRoot } from '../lib/util/package-root.js';

const work = mkdtempSync(join(tmpdir(), 'angle-portable-'));
after(() => rmSync(work, { recursive: true, force: true }));

function run(args: string[]) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/portable-records.ts', ...args], { cwd: packageRoot(), encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('--check says what it checked whether or not a record holds a path; a rewrite then passes it', () => {
  mkdirSync(join(work, 'exp'));
  writeFileSync(join(work, 'exp', 'a.json'), JSON.stringify({ runId: 'a', model: { id: 'project:models/x' }, metrics: { s: 1.5 } }));
  const clean = run(['--results', work, '--check']);
  assert.equal(clean.status, 0, clean.stderr);
  assert.equal(clean.stdout, `portable-records: 1 record(s) in ${work} checked; none holds an absolute path\n`);

  writeFileSync(join(work, 'exp', 'b.json'), JSON.stringify({ runId: 'b', model: { id: '/home/someone/models/x' }, metrics: { s: 2.5 } }));
  const dirty = run(['--results', work, '--check']);
  assert.equal(dirty.status, 1);
  assert.match(dirty.stdout, /b\.json: model\.id: \/home\/someone\/models\/x -> local:models\/x\n/);
  assert.match(dirty.stdout, /portable-records: 2 record\(s\) in .* checked; 1 hold an absolute path \(rewrite them with npm run portable-records\)\n$/);

  const rewrite = run(['--results', work]);
  assert.equal(rewrite.status, 0, rewrite.stderr);
  assert.match(rewrite.stdout, /portable-records: 2 record\(s\) in .*; 1 rewritten\n$/);
  assert.equal((JSON.parse(readFileSync(join(work, 'exp', 'b.json'), 'utf8')) as { model: { id: string } }).model.id, 'local:models/x');
  assert.equal(run(['--results', work, '--check']).status, 0);
});
