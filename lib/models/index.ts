/**
 * Text models behind one interface (./types.ts): loadModel picks the architecture from
 * config.json's model_type (./auto.ts); every architecture's model class extends
 * ./transformer-model.ts (decoders the decoder base ./decoder/decoder-model.ts over
 * ./adaptable-transformer-model.ts, answering ./causal-decoder.ts);
 * BERT lives in ./bert/, the LLaMA decoder (generation, chat templates) in ./llama/, OPT in
 * ./opt/, LoRA adapters in PEFT's layout in ./adapters/, tokenizers in ./tokenizers/, weight files
 * in ./safetensors.ts and ./weight-files.ts.
 *
 * Exported here (`angle.models` of lib/index.ts, the public face): what the notebooks and the docs
 * use, no more (test/public-surface.test.ts); the rest of the folder is internal, and lib/, scripts/
 * and tests import its files directly.
 */
export { LlamaModel } from './llama/model.js';
export { RELEASED_CHECKPOINTS } from './released.js';
