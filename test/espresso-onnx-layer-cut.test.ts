/**
 * A truncated encoder on ONNX Runtime computes no layer above its cut (issue 41 item 4): the engine
 * exports a graph that ends at the truncated layer (lib/models/bert/onnx-graph.ts `layers`), and
 * its states equal hidden_states[layer] of the full graph, in both graph layouts (fused on packed
 * tokens, standard padded), for [CLS] (the first-token variant) and mean pooling, and through the
 * encoder. The graph of the tiny golden BERT (2 layers) cut at 1 holds no weight of layer 1.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { chooseInferenceEngine } from '../lib/embed/engines/choose.js';
import type { InferenceEngine } from '../lib/embed/engines/types.js';
import { PooledSentenceEncoder } from '../lib/embed/encoder.js';
import { bertOnnxExporter } from '../lib/models/bert/onnx-graph.js';
import type { LoadedModel } from '../lib/models/auto.js';
import { NO_GOLDEN_MODEL } from './helpers/env.js';
import { maxAbsDiff, SAMPLE_TEXTS, useGoldenModel } from './helpers/golden-model.js';

const noModel = NO_GOLDEN_MODEL;
const TEXTS = SAMPLE_TEXTS;
const maxAbs = maxAbsDiff;
let m: LoadedModel;
useGoldenModel((loaded) => (m = loaded));

test('the BERT graph cut at layer 1 of 2 holds no weight of layer 1 and no pooler; bad cuts are refused', { skip: noModel }, () => {
  const names = (opts: Parameters<typeof bertOnnxExporter.export>[1]) => bertOnnxExporter.export(m.model, opts).model.graph.initializer.map((t) => t.name);
  for (const fused of [true, false]) {
    const full = names({ hiddenStates: true, fused });
    const cut = names({ hiddenStates: true, fused, layers: 1 });
    assert.ok(full.some((n) => n.startsWith('encoder.layer.1.')), `the full ${fused ? 'fused' : 'standard'} graph has layer 1`);
    assert.ok(cut.some((n) => n.startsWith('encoder.layer.0.')), 'the cut graph keeps layer 0');
    assert.deepEqual(cut.filter((n) => n.startsWith('encoder.layer.1.') || n.startsWith('pooler.')), [], `the cut ${fused ? 'fused' : 'standard'} graph has no layer 1 and no pooler`);
    const zero = names({ hiddenStates: false, fused, layers: 0 });
    assert.deepEqual(zero.filter((n) => n.startsWith('encoder.layer.')), [], 'a cut at 0 is the embedding output only');
  }
  const cut = bertOnnxExporter.export(m.model, { hiddenStates: true, fused: true, layers: 1 });
  assert.equal(cut.hiddenStates.length, 2, 'hidden_states[0..1]');
  assert.equal(cut.poolerOutput, undefined);
  assert.throws(() => bertOnnxExporter.export(m.model, { hiddenStates: false, fused: true, layers: 3 }), /layers: expected an integer in 0\.\.2/);
  assert.throws(() => bertOnnxExporter.export(m.model, { hiddenStates: false, fused: true, rows: 'first', layers: 0 }), /rows: 'first'/);
});

test('the cut graph\'s states equal the full graph\'s hidden_states[layer] (fused and standard graphs, all rows and first token)', { skip: noModel }, async (t) => {
  const engines: Array<[string, InferenceEngine]> = [];
  try {
    for (const graph of ['fused', 'standard'] as const) engines.push([graph, await chooseInferenceEngine(m.model, { engine: 'onnx', onnx: { cache: false, graph } })]);
  } catch (e) {
    return t.skip(`ONNX Runtime is not usable here: ${(e as Error).message.split('\n')[0]}`);
  }
  const batch = m.tokenizer.pad(TEXTS.map((s) => m.tokenizer.encode(s, null, 64)));
  const T = batch.seqLen;
  const H = m.model.hiddenSize;
  for (const [graph, engine] of engines) {
    const full = await engine.run(batch, { hiddenStates: true });
    try {
      for (const layer of [0, 1]) {
        const want = full.hiddenStates[layer].arraySync() as number[][][];
        const cut = await engine.run(batch, { hiddenStates: false, layers: layer });
        assert.deepEqual(cut.lastHiddenState.shape, [TEXTS.length, T, H]);
        assert.deepEqual(cut.hiddenStates, []);
        const got = cut.lastHiddenState.arraySync() as number[][][];
        // Compare real tokens only: the packed graph leaves padding slots as it likes (the mask hides them).
        let d = 0;
        for (let b = 0; b < TEXTS.length; b++) for (let s = 0; s < T; s++) if (batch.attentionMask[b * T + s]) d = Math.max(d, maxAbs(got[b][s], want[b][s]));
        t.diagnostic(`${graph} graph, cut at ${layer}: max |Δ| vs the full graph's hidden_states[${layer}] ${d.toExponential(2)}`);
        assert.ok(d < 1e-5, `${graph} layer ${layer}: ${d}`);
        cut.lastHiddenState.dispose();
        if (layer > 0) {
          // The first-token variant of the cut graph: [CLS] of that layer only.
          const first = await engine.run(batch, { hiddenStates: false, layers: layer, firstTokenOnly: true });
          const rows = first.lastHiddenState.arraySync() as number[][][];
          for (let b = 0; b < TEXTS.length; b++) assert.ok(maxAbs(rows[b][0], want[b][0]) < 1e-5, `${graph} first token, layer ${layer}, row ${b}`);
          first.lastHiddenState.dispose();
        }
      }
    } finally {
      for (const x of [full.lastHiddenState, ...full.hiddenStates]) x.dispose();
      full.poolerOutput?.dispose();
      await engine.dispose();
    }
  }
});

test('a truncated encoder on ONNX Runtime gives the tfjs engine\'s vectors (cls and avg, layers 0 and 1)', { skip: noModel }, async (t) => {
  for (const pooling of ['cls', 'avg'] as const) {
    for (const layer of [0, 1]) {
      let onnx;
      try {
        onnx = await new PooledSentenceEncoder(m, { pooling, engine: 'onnx', truncate: { layer, dim: 48 } }).encode(TEXTS);
      } catch (e) {
        return t.skip(`ONNX Runtime is not usable here: ${(e as Error).message.split('\n')[0]}`);
      }
      const tfjs = await new PooledSentenceEncoder(m, { pooling, engine: 'tfjs', truncate: { layer, dim: 48 } }).encode(TEXTS);
      assert.equal(onnx.dim, 48);
      const d = maxAbs(onnx.data, tfjs.data);
      t.diagnostic(`${pooling}, layer ${layer}, width 48: onnx (cut graph) vs tfjs max |Δ| ${d.toExponential(2)}`);
      assert.ok(d < 1e-4, `${pooling} layer ${layer}: ${d}`);
    }
  }
});
