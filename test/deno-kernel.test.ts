/**
 * The headless runner with Deno's Jupyter kernel (`npm run notebooks -- --kernel deno`,
 * scripts/notebooks/deno-kernel.ts): a notebook written here runs in the real `deno jupyter
 * --kernel` (the dev dependency's binary) over the Jupyter messaging protocol, and each cell's
 * outputs land in that cell — printed text, a large display (which deno 2.9.6 sends after the
 * cell's idle status, under the next request's id), an execute result, the library's display
 * (lib/notebook/tslab.ts over `Deno.jupyter`, display ids included) — and the first failing
 * cell stops the run with its error. Skips, saying why, where the binary is missing.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { denoBinary } from '../scripts/notebooks/deno-binary.js';
import { runNotebook } from '../scripts/notebooks/runner.js';
import { packageRoot } from '../lib/util/package-root.js';

const deno = denoBinary();
const skip = existsSync(deno) ? false : `no deno binary (${deno}): npm ci installs the dev dependency \`deno\``;

interface Output {
  output_type: string;
  name?: string;
  text?: string[];
  data?: Record<string, string[] | string>;
  ename?: string;
  evalue?: string;
}
interface Cell {
  cell_type: string;
  execution_count: number | null;
  outputs: Output[];
}

/** A display large enough to arrive late (2 MB). */
const BIG = 2_000_000;

const code = (source: string) => ({ cell_type: 'code', execution_count: null, metadata: {}, outputs: [], source });
const text = (o: Output) => [o.text ?? [], ...Object.values(o.data ?? {})].flat().join('');

describe('notebooks in Deno’s kernel', { skip }, () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'angle-deno-kernel-test-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('every output lands in its own cell; the library’s display works; a failing cell stops the run', async () => {
    const display = pathToFileURL(join(packageRoot(), 'lib', 'notebook', 'tslab.ts')).href;
    const nb = {
      cells: [
        code('console.log("hello from deno");\n1 + 1'),
        code(`Deno.jupyter.broadcast("display_data", { data: { "text/html": "y".repeat(${BIG}) }, metadata: {}, transient: {} });\n"after the big display"`),
        { cell_type: 'markdown', metadata: {}, source: 'between' },
        code(`const { tslabModule } = await import(${JSON.stringify(display)});\nconst k = tslabModule();\nk.display.html("<b>a table</b>");\nconst live = k.newDisplay();\nlive.html("first");\nlive.html("second");`),
        code('throw new Error("stop here")'),
        code('console.log("never runs")'),
      ],
      metadata: { kernelspec: { display_name: 'TypeScript', language: 'typescript', name: 'tslab' } },
      nbformat: 4,
      nbformat_minor: 5,
    };
    const file = join(dir, 'probe.ipynb');
    const out = join(dir, 'probe.out.ipynb');
    writeFileSync(file, JSON.stringify(nb));
    const run = await runNotebook(file, 'probe', out, { timeoutS: 300, verbose: false, env: process.env, kernel: 'deno' });
    assert.match(run.failure ?? '', /cell 5 \(code cell 4\): Error: .*stop here/);
    const executed = JSON.parse(readFileSync(out, 'utf8')) as { cells: Cell[]; metadata: { kernelspec: { name: string } } };
    assert.equal(executed.metadata.kernelspec.name, 'deno');
    const [c1, c2, , c4, c5, c6] = executed.cells;
    assert.deepEqual(c1.outputs.map((o) => o.output_type), ['stream', 'execute_result']);
    assert.match(text(c1.outputs[0]), /hello from deno/);
    assert.match(text(c1.outputs[1]), /2/);
    assert.deepEqual(c2.outputs.map((o) => o.output_type), ['display_data', 'execute_result']);
    assert.equal(text(c2.outputs[0]).length, BIG);
    assert.match(text(c2.outputs[1]), /after the big display/);
    // The library's display: one HTML output, and one display whose second call replaced the first.
    assert.deepEqual(c4.outputs.map((o) => [o.output_type, text(o)]), [
      ['display_data', '<b>a table</b>'],
      ['display_data', 'second'],
    ]);
    assert.equal(c5.outputs.length, 1);
    assert.equal(c5.outputs[0].output_type, 'error');
    assert.match(c5.outputs[0].evalue ?? '', /stop here/);
    assert.equal(c6.execution_count, null);
    assert.equal(c6.outputs.length, 0);
  });
});
