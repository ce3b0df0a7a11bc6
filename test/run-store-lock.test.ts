/**
 * The run store's lock per run key (lib/experiments/run-lock.ts): worker processes racing over the
 * same keys never run a key twice, a holder killed with its lock held does not block the key, and
 * a lock from another host goes stale only when its holder stops touching it.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { acquireRunLock, runLockFile, staleReason, type LockHolder } from '../lib/experiments/run-lock.js';

const CHILD = fileURLToPath(new URL('./helpers/run-store-lock-child.ts', import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'run-lock-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

function worker(resultsDir: string, log: string, keys: string[], extra: string[] = []): Promise<{ code: number | null; signal: string | null; lines: Array<{ key: string; status: string }>; stderr: string }> {
  return new Promise((res) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, resultsDir, log, keys.join(','), ...extra], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('close', (code, signal) => res({ code, signal, stderr: err, lines: out.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { key: string; status: string }) }));
  });
}

function ranKeys(log: string): string[] {
  return existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean).map((l) => l.split(' ')[0]!) : [];
}

test('two workers racing over the same keys run each key exactly once; the other reuses its record', async () => {
  const dir = join(tmp, 'race');
  const log = join(tmp, 'race.log');
  const keys = Array.from({ length: 8 }, (_, i) => `k${i}`);
  // Opposite orders: they meet in the middle, where each finds keys the other holds or finished.
  const [a, b] = await Promise.all([worker(dir, log, keys, ['--hold-ms', '30']), worker(dir, log, [...keys].reverse(), ['--hold-ms', '30'])]);
  assert.equal(a.code, 0, a.stderr);
  assert.equal(b.code, 0, b.stderr);
  const ran = ranKeys(log);
  assert.deepEqual([...ran].sort(), keys, `each key's work ran once: ${ran.join(' ')}`);
  for (const key of keys) {
    const statuses = [a, b].map((w) => w.lines.find((l) => l.key === key)?.status).sort();
    assert.deepEqual(statuses, ['reused', 'trained'], `key ${key}: one worker ran it, the other reused it`);
  }
  // Every lock was released.
  for (const key of keys) assert.equal(existsSync(runLockFile(dir, 'race', key)), false, `lock of ${key} left behind`);
});

test('a worker killed while it holds a lock does not block the key: the next one breaks the stale lock and runs it', async () => {
  const dir = join(tmp, 'killed');
  const log = join(tmp, 'killed.log');
  const first = await worker(dir, log, ['a', 'b'], ['--die-in', 'b']);
  assert.equal(first.signal, 'SIGKILL');
  assert.ok(existsSync(runLockFile(dir, 'race', 'b')), 'the killed holder left its lock file');
  const second = await worker(dir, log, ['a', 'b']);
  assert.equal(second.code, 0, second.stderr);
  assert.deepEqual(second.lines, [
    { key: 'a', status: 'reused' },
    { key: 'b', status: 'trained' },
  ]);
  assert.deepEqual(ranKeys(log), ['a', 'b', 'b'], 'b began once in the killed worker, then ran to the end in the second');
});

test('a live holder in this process is refused by name instead of waiting forever', async () => {
  const dir = join(tmp, 'self');
  const held = await acquireRunLock(dir, 'race', 'x', 'run x');
  await assert.rejects(acquireRunLock(dir, 'race', 'x', 'run x again', { pollMs: 5 }), /already holds the lock of run x/);
  held.release();
  const again = await acquireRunLock(dir, 'race', 'x', 'run x', { pollMs: 5 });
  again.release();
  assert.equal(existsSync(runLockFile(dir, 'race', 'x')), false);
});

test("another host's lock is stale only once its holder stopped touching it", () => {
  const dir = join(tmp, 'host', 'race', 'locks');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'h.lock');
  const holder: LockHolder = { pid: 1, host: 'some-other-node', since: new Date().toISOString(), label: 'run h' };
  writeFileSync(file, JSON.stringify(holder));
  assert.equal(staleReason(file, holder, 10 * 60_000), undefined);
  const old = new Date(Date.now() - 20 * 60_000);
  utimesSync(file, old, old);
  assert.match(staleReason(file, holder, 10 * 60_000) ?? '', /some-other-node has not touched it for 20\.0 min/);
  // This host: a pid that does not exist is gone at once.
  const gone: LockHolder = { ...holder, host: hostname(), pid: 2 ** 22 + 17 };
  assert.match(staleReason(file, gone, 10 * 60_000) ?? '', /is gone/);
});

test('a run key that is not a file name is refused', () => {
  assert.throws(() => runLockFile(tmp, 'race', '../x'), /a run key is letters, digits/);
});
