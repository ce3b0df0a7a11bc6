/**
 * Mapping checkpoint tensors onto the OPT decoder's parameters.
 *
 * Canonical names are those of `OPTForCausalLM.save_pretrained`: `model.decoder.embed_tokens.weight`
 * [vocab, word_embed_proj_dim], `model.decoder.embed_positions.weight` [max_positions + 2, hidden],
 * `model.decoder.layers.N.self_attn.{q,k,v,out}_proj.{weight,bias}`,
 * `model.decoder.layers.N.{self_attn_layer_norm,final_layer_norm}.{weight,bias}`,
 * `model.decoder.layers.N.{fc1,fc2}.{weight,bias}`, `model.decoder.final_layer_norm.{weight,bias}`
 * (pre-LN only) and `model.decoder.project_{in,out}.weight` (only when word_embed_proj_dim ≠
 * hidden_size). Biases exist with enable_bias, LayerNorm tensors with
 * layer_norm_elementwise_affine. Linear weights are PyTorch's [out, in].
 *
 * Also accepted: the `OPTModel` naming without the `model.` prefix (`decoder.layers.0...`), which
 * some `facebook/opt-*` checkpoints on the Hub use. `lm_head.weight` is tied to the token
 * embeddings (HF's `_tied_weights_keys`), so a stored copy is ignored, as transformers does.
 * Anything missing, of the wrong shape or unexpected is reported at once.
 */
import { byCanonicalName, fitParameters, type CheckpointTensor } from '../check-parameters.js';
import type { OptConfig } from './config.js';

/** The linear layers of a decoder layer, by module name under `model.decoder.layers.N.`. */
export const OPT_LINEAR_MODULES = ['self_attn.q_proj', 'self_attn.k_proj', 'self_attn.v_proj', 'self_attn.out_proj', 'fc1', 'fc2'] as const;
export type OptLinearModule = (typeof OPT_LINEAR_MODULES)[number];

/** The prefix of the decoder's parameters. */
export const OPT_PREFIX = 'model.decoder.';

/** [out, in] of each linear module of a layer. */
export function optLinearShapes(cfg: OptConfig): Record<OptLinearModule, [number, number]> {
  const h = cfg.hiddenSize;
  return {
    'self_attn.q_proj': [h, h],
    'self_attn.k_proj': [h, h],
    'self_attn.v_proj': [h, h],
    'self_attn.out_proj': [h, h],
    fc1: [cfg.ffnDim, h],
    fc2: [h, cfg.ffnDim],
  };
}

/** Every linear layer of the decoder layers (not the LM head): module name -> [out, in]. */
export function optLinearModules(cfg: OptConfig): Map<string, readonly [number, number]> {
  const shapes = optLinearShapes(cfg);
  const m = new Map<string, readonly [number, number]>();
  for (let l = 0; l < cfg.numLayers; l++) for (const mod of OPT_LINEAR_MODULES) m.set(`${OPT_PREFIX}layers.${l}.${mod}`, shapes[mod]);
  return m;
}

/** Expected parameter shapes for a config, in canonical naming. */
export function optParameterShapes(cfg: OptConfig): Map<string, number[]> {
  const h = cfg.hiddenSize;
  const m = new Map<string, number[]>();
  const p = OPT_PREFIX;
  m.set(`${p}embed_tokens.weight`, [cfg.vocabSize, cfg.wordEmbedProjDim]);
  m.set(`${p}embed_positions.weight`, [cfg.maxPositions + 2, h]);
  if (cfg.wordEmbedProjDim !== h) {
    m.set(`${p}project_in.weight`, [h, cfg.wordEmbedProjDim]);
    m.set(`${p}project_out.weight`, [cfg.wordEmbedProjDim, h]);
  }
  const layerNorm = (name: string) => {
    if (!cfg.layerNormAffine) return;
    m.set(`${name}.weight`, [h]);
    m.set(`${name}.bias`, [h]);
  };
  const linear = optLinearShapes(cfg);
  for (let l = 0; l < cfg.numLayers; l++) {
    const lp = `${p}layers.${l}.`;
    layerNorm(`${lp}self_attn_layer_norm`);
    for (const mod of OPT_LINEAR_MODULES) {
      m.set(`${lp}${mod}.weight`, linear[mod]);
      if (cfg.enableBias) m.set(`${lp}${mod}.bias`, [linear[mod][0]]);
    }
    layerNorm(`${lp}final_layer_norm`);
  }
  if (cfg.finalLayerNorm) layerNorm(`${p}final_layer_norm`);
  return m;
}

/** The canonical name of a checkpoint tensor, or undefined for the tied LM head. */
export function canonicalOptName(name: string): string | undefined {
  if (name === 'lm_head.weight') return undefined;
  if (name.startsWith('decoder.')) return `model.${name}`;
  return name;
}

/**
 * Picks, renames and checks the decoder's parameters from a checkpoint's tensors: every
 * parameter of the config must be present with its shape, and nothing else may be there.
 */
export function mapOptWeights<T extends CheckpointTensor>(cfg: OptConfig, tensors: ReadonlyMap<string, T>, file: string): Map<string, T> {
  const found = byCanonicalName(tensors, canonicalOptName, file);
  const want = optParameterShapes(cfg);
  const shape =
    `${cfg.numLayers} layers, hidden ${cfg.hiddenSize}, ${cfg.numHeads} heads, ffn ${cfg.ffnDim}, vocab ${cfg.vocabSize}` +
    `${cfg.wordEmbedProjDim !== cfg.hiddenSize ? `, word_embed_proj_dim ${cfg.wordEmbedProjDim}` : ''}, ${cfg.doLayerNormBefore ? 'pre' : 'post'}-LN`;
  return fitParameters(found, want, { file, target: `the OPT config (${shape})` });
}
