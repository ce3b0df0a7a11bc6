/**
 * BERT's registry entry (../architecture.ts): config.json `model_type: bert` (or an old
 * checkpoint's config without one but with BERT's fields), the ONNX exporter, [CLS] pooling.
 */
import { UnavailableError } from '../../util/errors.js';
import type { Architecture } from '../architecture.js';
import { initialWeights, initStdOf } from '../initial-weights.js';
import { HfTokenizer } from '../tokenizers/hf.js';
import { parseBertConfig } from './config.js';
import { loadBert } from './load.js';
import { BertModel } from './model.js';
import { bertOnnxExporter } from './onnx-graph.js';
import { bertParameterShapes } from './weights.js';

export const BERT_ARCHITECTURE: Architecture = {
  name: 'bert',
  modelTypes: ['bert'],
  claimsConfig(config) {
    const names = Array.isArray(config.architectures) ? (config.architectures as unknown[]).map(String) : [];
    return names.some((n) => /^Bert/.test(n)) || (names.length === 0 && 'hidden_size' in config && 'type_vocab_size' in config);
  },
  parseConfig: (raw, file) => parseBertConfig({ ...raw }, file),
  load: (dir, config, file, files, o) => loadBert(dir, config, file, files, o),
  parameterShapes: (config) => bertParameterShapes(parseBertConfig({ ...config }, 'config')),
  fromConfig(config, opts) {
    const cfg = parseBertConfig({ ...config }, 'config');
    return new BertModel(cfg, initialWeights(bertParameterShapes(cfg), opts, initStdOf(config)), opts.dropoutSeed ?? 0);
  },
  onnx: bertOnnxExporter,
  // AnglE-BERT's and SimCSE's (AnglE Table 4: cls is the best of five).
  defaultPooling: 'cls',
  embeddingWidth: (config) => Number(config.hidden_size),
  rehearsalTokenizer(_config, sharedModel) {
    const dir = sharedModel('bert-base-uncased-tokenizer');
    if (!dir) throw new UnavailableError("the rehearsal's BERT tokenizer is the shared folder's models/bert-base-uncased-tokenizer, which is not here");
    return { tokenizer: HfTokenizer.fromDir(dir), note: "bert-base-uncased's tokenizer" };
  },
};
