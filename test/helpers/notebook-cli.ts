/**
 * `npm run notebooks` as a child process on the plan fixture (test/fixtures/plan-notebooks/), for
 * the tests of its workers and its Slurm submission: the command, and what the rendered fixture shows.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { packageRoot } from '../../lib/util/package-root.js';

export const PLAN_FIXTURE_DIR = 'test/fixtures/plan-notebooks';

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The runner on the fixture folder, smoke preset, results in `resultsDir`; this process's ANGLE_* variables left out. */
export function runNotebooks(args: string[], resultsDir: string, env: Record<string, string> = {}): Promise<CliRun> {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ANGLE_') || k === 'ANGLE_ONNX_CACHE'));
  return new Promise((res, rej) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/notebooks/cli.ts', '--dir', PLAN_FIXTURE_DIR, '--preset', 'smoke', ...args], {
      cwd: packageRoot(),
      // Only the numbers are checked: no static figure images (each kernel would start Chromium for them).
      env: { ...clean, ANGLE_RESULTS_DIR: resultsDir, ANGLE_STATIC_FIGURES: 'off', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b) => (stdout += b));
    child.stderr.on('data', (b) => (stderr += b));
    child.on('error', rej);
    child.on('close', (code) => res({ code, stdout, stderr }));
  });
}

interface Executed {
  cells: Array<{ cell_type: string; outputs?: Array<{ output_type: string; data?: Record<string, string | string[]> }> }>;
}

/** The fixture's last cell: [row, test Spearman] of every record that fills a cell. */
export function renderedNumbers(file: string): Array<[string, number]> {
  const nb = JSON.parse(readFileSync(file, 'utf8')) as Executed;
  const last = nb.cells.filter((c) => c.cell_type === 'code').at(-1)!;
  const out = last.outputs?.find((o) => o.output_type === 'execute_result');
  assert.ok(out, `${file}: the last cell has a result`);
  return JSON.parse(([] as string[]).concat(out.data!['text/plain']!).join('')) as Array<[string, number]>;
}

/** The rendered fixture's runs table, as HTML. */
export function runsTableHtml(file: string): string {
  const nb = JSON.parse(readFileSync(file, 'utf8')) as Executed;
  const html = nb.cells
    .flatMap((c) => c.outputs ?? [])
    .map((o) => ([] as string[]).concat(o.data?.['text/html'] ?? []).join(''))
    .find((h) => h.includes('<caption>Runs</caption>'));
  assert.ok(html, `${file}: a runs table`);
  return html;
}
