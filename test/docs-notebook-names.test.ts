/**
 * Issue 38: docs/jupyter.md's example ran `npm run notebooks -- 00 02-transfer-sts`, a notebook
 * that does not exist (the runner then lists the available ones and stops). Every notebook the
 * README and docs/*.md name — a `notebooks/NN-name` path, or an `NN-name` argument of `npm run
 * notebooks` / `npm run check-rendered` — is a notebook under notebooks/ (or a prefix of one, as
 * the runner accepts).
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { packageRoot } from '../lib/util/package-root.js';

const ROOT = packageRoot();

test('every notebook the README and docs name exists', () => {
  const notebooks = readdirSync(join(ROOT, 'notebooks')).filter((f) => f.endsWith('.ipynb')).map((f) => f.slice(0, -'.ipynb'.length));
  const docs = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => join('docs', f))];
  const named: string[] = [];
  const missing: string[] = [];
  for (const doc of docs) {
    readFileSync(join(ROOT, doc), 'utf8')
      .split('\n')
      .forEach((line, i) => {
        const names = [
          // A path under the project's notebooks/ (not test/fixtures/notebooks/).
          ...[...line.matchAll(/(?<![\w/.-])notebooks\/(\d\d-[a-z][a-z0-9-]*)/g)].map((m) => m[1]!),
          // Arguments of the commands that take notebook names.
          ...[...line.matchAll(/npm run (?:notebooks|check-rendered) --((?: [^\s`#|]+)*)/g)].flatMap((m) => m[1]!.trim().split(/\s+/).filter((a) => /^\d\d-[a-z]/.test(a))),
        ];
        for (const n of names) {
          named.push(n);
          const base = n.replace(/\.ipynb$/, '');
          if (!notebooks.some((nb) => nb === base || nb.startsWith(base))) missing.push(`${doc}:${i + 1}: ${n}`);
        }
      });
  }
  assert.ok(named.length >= 3, `the check found only ${named.length} names: its patterns no longer match the docs`);
  assert.deepEqual(missing, []);
});
