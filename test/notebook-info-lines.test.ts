/**
 * Issue 38: the ONNX engine's info line ("inference: ONNX Runtime …") showed as a red stderr box in
 * every notebook. Under tslab (`globalThis.__tslab__`, set by the kernel and the headless runner)
 * it goes to stdout; on the command line it stays on stderr, out of a command's output.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { initBackend } from '../lib/backend/index.js';
import { chooseInferenceEngine } from '../lib/embed/engines/choose.js';
import { loadModel } from '../lib/models/auto.js';
import { GOLDEN_DIR } from './helpers/env.js';

async function linesOf(body: () => Promise<unknown>): Promise<{ out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const log = console.log;
  const error = console.error;
  console.log = (...a: unknown[]) => void out.push(a.join(' '));
  console.error = (...a: unknown[]) => void err.push(a.join(' '));
  try {
    await body();
  } finally {
    console.log = log;
    console.error = error;
  }
  return { out, err };
}

test("the inference engine's info line: stdout in a notebook, stderr on the command line", { skip: GOLDEN_DIR ? false : 'needs the golden tiny BERT' }, async () => {
  await initBackend('cpu', { quiet: true });
  const m = await loadModel(join(GOLDEN_DIR!, 'model'));
  try {
    // Two graph settings: two engines, each with its own line (a line is said once per process).
    const cli = await linesOf(() => chooseInferenceEngine(m.model, { engine: 'onnx', onnx: { graph: 'standard' } }));
    assert.deepEqual(cli.out, []);
    assert.match(cli.err.join('\n'), /^inference: ONNX Runtime .*standard graph$/m);
    (globalThis as { __tslab__?: unknown }).__tslab__ = {};
    try {
      const notebook = await linesOf(() => chooseInferenceEngine(m.model, { engine: 'onnx' }));
      assert.deepEqual(notebook.err, []);
      assert.match(notebook.out.join('\n'), /^inference: ONNX Runtime .*fused graph$/m);
    } finally {
      delete (globalThis as { __tslab__?: unknown }).__tslab__;
    }
    // Deno's Jupyter kernel (Deno.jupyter): a notebook too (a third engine setting, so a new line).
    (globalThis as { Deno?: unknown }).Deno = { jupyter: {} };
    try {
      const deno = await linesOf(() => chooseInferenceEngine(m.model, { engine: 'onnx', onnx: { threads: 1 } }));
      assert.deepEqual(deno.err, []);
      assert.match(deno.out.join('\n'), /^inference: ONNX Runtime .*1 thread/m);
    } finally {
      delete (globalThis as { Deno?: unknown }).Deno;
    }
  } finally {
    m.model.dispose();
  }
});
