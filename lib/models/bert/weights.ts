/**
 * Mapping checkpoint tensors onto the BERT encoder's parameters.
 *
 * Canonical names are those of `BertModel.save_pretrained` (`embeddings.word_embeddings.weight`,
 * `encoder.layer.0.attention.self.query.weight`, `pooler.dense.bias`, ...). Also accepted: the
 * original bert-base-uncased checkpoint naming (`bert.` prefix, `LayerNorm.gamma` / `.beta`)
 * and the task-model prefix `bert.` in general; pre-training and task heads (`cls.*`,
 * `classifier.*`, ...) and the `position_ids` buffer are ignored. Anything missing or of the
 * wrong shape is reported all at once, so one error message shows the whole mismatch.
 */
import { byCanonicalName, fitParameters } from '../check-parameters.js';
import type { BertConfig } from './config.js';

export interface RawTensor {
  shape: number[];
  data: Float32Array | Int32Array;
}

/** Expected parameter shapes for a config, in canonical naming. PyTorch Linear weights are [out, in]. */
export function bertParameterShapes(cfg: BertConfig, withPooler = true): Map<string, number[]> {
  const h = cfg.hiddenSize;
  const m = new Map<string, number[]>();
  m.set('embeddings.word_embeddings.weight', [cfg.vocabSize, h]);
  m.set('embeddings.position_embeddings.weight', [cfg.maxPositions, h]);
  m.set('embeddings.token_type_embeddings.weight', [cfg.typeVocabSize, h]);
  m.set('embeddings.LayerNorm.weight', [h]);
  m.set('embeddings.LayerNorm.bias', [h]);
  for (let l = 0; l < cfg.numLayers; l++) {
    const p = `encoder.layer.${l}.`;
    for (const n of ['query', 'key', 'value']) {
      m.set(`${p}attention.self.${n}.weight`, [h, h]);
      m.set(`${p}attention.self.${n}.bias`, [h]);
    }
    m.set(`${p}attention.output.dense.weight`, [h, h]);
    m.set(`${p}attention.output.dense.bias`, [h]);
    m.set(`${p}attention.output.LayerNorm.weight`, [h]);
    m.set(`${p}attention.output.LayerNorm.bias`, [h]);
    m.set(`${p}intermediate.dense.weight`, [cfg.intermediateSize, h]);
    m.set(`${p}intermediate.dense.bias`, [cfg.intermediateSize]);
    m.set(`${p}output.dense.weight`, [h, cfg.intermediateSize]);
    m.set(`${p}output.dense.bias`, [h]);
    m.set(`${p}output.LayerNorm.weight`, [h]);
    m.set(`${p}output.LayerNorm.bias`, [h]);
  }
  if (withPooler) {
    m.set('pooler.dense.weight', [h, h]);
    m.set('pooler.dense.bias', [h]);
  }
  return m;
}

/** The canonical name of a checkpoint tensor, or undefined for tensors the encoder does not use. */
export function canonicalBertName(name: string): string | undefined {
  let n = name;
  for (const prefix of ['bert.', 'model.', 'roberta.']) {
    if (n.startsWith(prefix)) {
      n = n.slice(prefix.length);
      break;
    }
  }
  if (!/^(embeddings|encoder|pooler)\./.test(n)) return undefined; // heads: cls.*, classifier.*, qa_outputs.* ...
  if (n.endsWith('position_ids')) return undefined; // a buffer, not a parameter
  return n.replace(/LayerNorm\.gamma$/, 'LayerNorm.weight').replace(/LayerNorm\.beta$/, 'LayerNorm.bias');
}

/**
 * Picks, renames and checks the encoder's parameters from a checkpoint. The pooler is optional
 * (checkpoints saved without it have none); every other parameter must be present with the
 * config's shape.
 */
export function mapBertWeights(cfg: BertConfig, tensors: Map<string, RawTensor>, file: string): Map<string, RawTensor> {
  const found = byCanonicalName(tensors, canonicalBertName, file);
  const hasPooler = found.has('pooler.dense.weight') || found.has('pooler.dense.bias');
  const want = bertParameterShapes(cfg, hasPooler);
  return fitParameters(found, want, {
    file,
    target: `the BERT config (${cfg.numLayers} layers, hidden ${cfg.hiddenSize})`,
    unexpectedLabel: 'unexpected encoder tensors',
  });
}
