#!/usr/bin/env node
/**
 * What `npm test` runs: the test files two at a time, the longest first (./test-files.mjs), through
 * node:test's run() with the spec reporter. Not `node --test <files>`: Node 20 sorts the files it is
 * given (lib/internal/test_runner/runner.js createTestFileList), so the longest file
 * (transfer-golden) started near the end, alphabetically, and ran alone while the other core
 * idled; run({ files }) keeps the order given.
 *
 *   node --import tsx scripts/run-tests.mjs [--concurrency <n>] [files...]
 *
 * The test processes get this process's --import tsx (run() passes execArgv on). Exit status 1 when
 * any test or file failed, else 0.
 */
import { run } from 'node:test';
import { spec } from 'node:test/reporters';
import { parseArgs } from 'node:util';
import { testFiles } from './test-files.mjs';

const { values, positionals } = parseArgs({ options: { concurrency: { type: 'string', default: '2' }, help: { type: 'boolean', short: 'h' } }, allowPositionals: true });
if (values.help) {
  console.log('usage: node --import tsx scripts/run-tests.mjs [--concurrency <n> (default 2)] [test files... (default: every test/*.test.ts, longest first)]');
  process.exit(0);
}
const concurrency = Number(values.concurrency);
if (!(Number.isInteger(concurrency) && concurrency >= 1)) {
  console.error(`run-tests: --concurrency expects a whole number >= 1, got '${values.concurrency}'`);
  process.exit(2);
}
const files = positionals.length > 0 ? positionals : testFiles();
const stream = run({ files, concurrency });
stream.on('test:fail', () => {
  process.exitCode = 1;
});
stream.compose(spec).pipe(process.stdout);
