/**
 * Mapping checkpoint tensors onto the LLaMA decoder's parameters.
 *
 * Canonical names are those of `LlamaForCausalLM.save_pretrained`: `model.embed_tokens.weight`,
 * `model.layers.N.self_attn.{q,k,v,o}_proj.weight`, `model.layers.N.mlp.{gate,up,down}_proj.weight`,
 * `model.layers.N.{input,post_attention}_layernorm.weight`, `model.norm.weight` and
 * `lm_head.weight` (absent when the config ties it to the embedding). Also accepted: the bare
 * `LlamaModel` naming (no `model.` prefix). The `rotary_emb.inv_freq` buffers of older
 * checkpoints are ignored (the frequencies come from the config), and so is a stored `lm_head`
 * when the config ties it (transformers does the same). Anything missing, of the wrong shape or
 * unexpected is reported all at once, so one error shows the whole mismatch.
 */
import { byCanonicalName, fitParameters } from '../check-parameters.js';
import type { TensorEntry } from '../safetensors.js';
import type { LlamaConfig } from './config.js';

/** A weight as read from a file: row-major data and its shape (PyTorch Linear weights are [out, in]). */
export type WeightTensor = Pick<TensorEntry, 'shape' | 'data'>;

/** The seven linear layers of a decoder layer, by their module names under `model.layers.N.`. */
export const LLAMA_LINEAR_MODULES = ['self_attn.q_proj', 'self_attn.k_proj', 'self_attn.v_proj', 'self_attn.o_proj', 'mlp.gate_proj', 'mlp.up_proj', 'mlp.down_proj'] as const;

/** [out, in] of each linear module of a layer. */
export function llamaLinearShapes(cfg: LlamaConfig): Record<(typeof LLAMA_LINEAR_MODULES)[number], [number, number]> {
  const h = cfg.hiddenSize;
  const q = cfg.numHeads * cfg.headDim;
  const kv = cfg.numKvHeads * cfg.headDim;
  const i = cfg.intermediateSize;
  return {
    'self_attn.q_proj': [q, h],
    'self_attn.k_proj': [kv, h],
    'self_attn.v_proj': [kv, h],
    'self_attn.o_proj': [h, q],
    'mlp.gate_proj': [i, h],
    'mlp.up_proj': [i, h],
    'mlp.down_proj': [h, i],
  };
}

/** Every linear layer of the decoder layers (not the LM head): module name -> [out, in]. */
export function llamaLinearModules(cfg: LlamaConfig): Map<string, readonly [number, number]> {
  const shapes = llamaLinearShapes(cfg);
  const m = new Map<string, readonly [number, number]>();
  for (let l = 0; l < cfg.numLayers; l++) for (const mod of LLAMA_LINEAR_MODULES) m.set(`model.layers.${l}.${mod}`, shapes[mod]);
  return m;
}

/** Expected parameter shapes for a config, in canonical naming. */
export function llamaParameterShapes(cfg: LlamaConfig): Map<string, number[]> {
  const h = cfg.hiddenSize;
  const m = new Map<string, number[]>();
  m.set('model.embed_tokens.weight', [cfg.vocabSize, h]);
  const linear = llamaLinearShapes(cfg);
  for (let l = 0; l < cfg.numLayers; l++) {
    const p = `model.layers.${l}.`;
    m.set(`${p}input_layernorm.weight`, [h]);
    for (const mod of LLAMA_LINEAR_MODULES) m.set(`${p}${mod}.weight`, linear[mod]);
    m.set(`${p}post_attention_layernorm.weight`, [h]);
  }
  m.set('model.norm.weight', [h]);
  if (!cfg.tieWordEmbeddings) m.set('lm_head.weight', [cfg.vocabSize, h]);
  return m;
}

/** The canonical name of a checkpoint tensor, or undefined for buffers the decoder recomputes. */
export function canonicalLlamaName(name: string): string | undefined {
  if (name.endsWith('rotary_emb.inv_freq')) return undefined;
  if (name === 'lm_head.weight' || name.startsWith('model.')) return name;
  if (/^(embed_tokens|layers|norm)\./.test(name)) return `model.${name}`;
  return name;
}

/**
 * Picks, renames and checks the decoder's parameters from a checkpoint's tensors: every
 * parameter of the config must be present with its shape, and nothing else may be there.
 */
export function mapLlamaWeights<T extends WeightTensor>(cfg: LlamaConfig, tensors: ReadonlyMap<string, T>, file: string): Map<string, T> {
  // A tied head reads the token embeddings: a stored lm_head.weight is not kept.
  const canonical = (name: string) => {
    const c = canonicalLlamaName(name);
    return c === 'lm_head.weight' && cfg.tieWordEmbeddings ? undefined : c;
  };
  const found = byCanonicalName(tensors, canonical, file);
  const want = llamaParameterShapes(cfg);
  const shape = `${cfg.numLayers} layers, hidden ${cfg.hiddenSize}, ${cfg.numHeads}/${cfg.numKvHeads} heads, vocab ${cfg.vocabSize}${cfg.tieWordEmbeddings ? ', tied head' : ''}`;
  return fitParameters(found, want, { file, target: `the LLaMA config (${shape})` });
}
