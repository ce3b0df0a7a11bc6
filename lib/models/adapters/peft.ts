/**
 * LoRA adapters on disk in PEFT's layout (huggingface/peft, docs/source/developer_guides/
 * checkpoint.md), so PEFT loads ours and we load PEFT's (AnglE released its LLaMA models so):
 *
 * - `adapter_config.json`: peft_type LORA, r, lora_alpha, lora_dropout, target_modules, use_rslora,
 *   bias "none", base_model_name_or_path, task_type, and PEFT's other keys at their defaults;
 * - `adapter_model.safetensors`: only the adapter matrices, named
 *   `base_model.model.<module>.lora_A.weight` [r, in] and `….lora_B.weight` [out, r], where
 *   <module> is the module's name in the base model (for LlamaForCausalLM
 *   `model.layers.0.self_attn.q_proj`); PEFT's adapter name (`.default`) is not stored.
 *
 * Reading checks everything before attaching anything: the config's peft_type and options we do
 * not implement (DoRA, biases, modules_to_save, per-module rank/alpha patterns), each tensor's
 * module against the model's linear layers and its shape against the layer's and the rank, so an
 * adapter made for another base model fails with the tensor and both shapes named. Adapters saved
 * for a bare `LlamaModel` (names without the inner `model.`) are accepted too.
 *
 * `exportLoraAdapter` writes the same two files as a folder to publish (with a model card and any
 * other files beside them), appearing whole in one rename, from a model's adapters or from an
 * adapter directory already on disk (checked as `loadLoraAdapter` checks it, then copied).
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { tf } from '../../backend/index.js';
import { writeDirectoryAtomicSync, writeFileAtomicSync } from '../../util/atomic-write.js';
import { InputError } from '../../util/errors.js';
import { readSafetensors, serializeSafetensors, writeSafetensors, type TensorToWrite } from '../safetensors.js';
import { checkExportTarget } from '../sentence-transformers/write.js';
import { isLoraParameter, LoraLinear, loraAdapters, loraVariable } from './lora.js';
import type { AdaptableModel } from './types.js';

export const ADAPTER_CONFIG_FILE = 'adapter_config.json';
export const ADAPTER_WEIGHTS_FILE = 'adapter_model.safetensors';
const PREFIX = 'base_model.model.';

export interface SaveAdapterOptions {
  /** base_model_name_or_path (a Hub id), recorded for whoever loads the adapter. */
  baseModel?: string;
  /** PEFT task_type (default CAUSAL_LM). */
  taskType?: string | null;
}

/** adapter_config.json's object and the adapter tensors of a model's LoRA adapters, in PEFT's naming. */
async function loraAdapterContents(model: AdaptableModel, opts: SaveAdapterOptions): Promise<{ config: Record<string, unknown>; tensors: Record<string, TensorToWrite> }> {
  const adapters = loraAdapters(model);
  if (adapters.size === 0) throw new InputError('the model has no LoRA adapters to save');
  const first = adapters.values().next().value!;
  for (const [m, a] of adapters) {
    if (a.r !== first.r || a.alpha !== first.alpha || a.dropout !== first.dropout || a.useRslora !== first.useRslora) {
      throw new InputError(`LoRA adapters differ in r/alpha/dropout (${m}: r ${a.r}, alpha ${a.alpha}; first: r ${first.r}, alpha ${first.alpha}); one adapter_config.json cannot describe them`);
    }
  }
  const targets = [...new Set([...adapters.keys()].map((m) => m.split('.').pop()!))].sort();
  const config = {
    alpha_pattern: {},
    auto_mapping: null,
    base_model_name_or_path: opts.baseModel ?? null,
    bias: 'none',
    fan_in_fan_out: false,
    inference_mode: true,
    init_lora_weights: true,
    layers_pattern: null,
    layers_to_transform: null,
    lora_alpha: first.alpha,
    lora_dropout: first.dropout,
    modules_to_save: null,
    peft_type: 'LORA',
    r: first.r,
    rank_pattern: {},
    revision: null,
    target_modules: targets,
    task_type: opts.taskType === undefined ? 'CAUSAL_LM' : opts.taskType,
    use_dora: false,
    use_rslora: first.useRslora,
  };
  const tensors: Record<string, TensorToWrite> = {};
  for (const [module, a] of adapters) {
    for (const [name, v] of a.params) tensors[`${PREFIX}${module}.${name}`] = { dtype: 'F32', shape: v.shape.slice(), data: (await v.data()) as Float32Array };
  }
  return { config, tensors };
}

/** Writes the model's LoRA adapters as a PEFT adapter directory; returns the files written. */
export async function saveLoraAdapter(dir: string, model: AdaptableModel, opts: SaveAdapterOptions = {}): Promise<string[]> {
  const { config, tensors } = await loraAdapterContents(model, opts);
  mkdirSync(dir, { recursive: true });
  const weights = join(dir, ADAPTER_WEIGHTS_FILE);
  const cfgPath = join(dir, ADAPTER_CONFIG_FILE);
  writeSafetensors(weights, tensors, { format: 'pt' });
  writeFileAtomicSync(cfgPath, JSON.stringify(config, null, 2) + '\n');
  return [cfgPath, weights];
}

export interface ExportAdapterOptions extends SaveAdapterOptions {
  /** Replace an existing non-empty folder (default: refuse). */
  overwrite?: boolean;
  /** More files by path inside the folder ('/'-separated, e.g. README.md). */
  files?: Readonly<Record<string, string | Uint8Array>>;
}

/**
 * Writes a PEFT adapter folder to publish: adapter_config.json, adapter_model.safetensors and
 * `opts.files`, from `source` — a model with LoRA adapters, or an adapter directory (whose config
 * is checked, and whose base_model_name_or_path `opts.baseModel` replaces when given). Returns the
 * files written, relative to `dir`.
 */
export async function exportLoraAdapter(dir: string, source: AdaptableModel | string, opts: ExportAdapterOptions = {}): Promise<string[]> {
  checkExportTarget(dir, opts.overwrite);
  let config: Record<string, unknown> | undefined;
  let tensors: Record<string, TensorToWrite> | undefined;
  let copyWeightsFrom: string | undefined;
  if (typeof source === 'string') {
    const cfgPath = join(source, ADAPTER_CONFIG_FILE);
    copyWeightsFrom = join(source, ADAPTER_WEIGHTS_FILE);
    if (!existsSync(cfgPath) || !existsSync(copyWeightsFrom)) throw new InputError(`not a PEFT adapter directory (it needs ${ADAPTER_CONFIG_FILE} and ${ADAPTER_WEIGHTS_FILE})`, { file: source });
    readPeftLoraConfig(cfgPath);
    config = JSON.parse(readFileSync(cfgPath, 'utf8')) as Record<string, unknown>;
    if (opts.baseModel !== undefined) config.base_model_name_or_path = opts.baseModel;
  } else {
    ({ config, tensors } = await loraAdapterContents(source, opts));
  }
  const extra = Object.entries(opts.files ?? {});
  for (const [p] of extra) {
    if (p === '' || p.startsWith('/') || p.split('/').some((x) => x === '' || x === '.' || x === '..')) throw new InputError(`export file '${p}' must be a relative path inside the folder`);
  }
  writeDirectoryAtomicSync(dir, (tmp) => {
    writeFileSync(join(tmp, ADAPTER_CONFIG_FILE), JSON.stringify(config, null, 2) + '\n');
    if (copyWeightsFrom) copyFileSync(copyWeightsFrom, join(tmp, ADAPTER_WEIGHTS_FILE));
    else writeFileSync(join(tmp, ADAPTER_WEIGHTS_FILE), serializeSafetensors(tensors!, { format: 'pt' }));
    for (const [p, content] of extra) {
      mkdirSync(dirname(join(tmp, p)), { recursive: true });
      writeFileSync(join(tmp, p), content);
    }
  });
  return [ADAPTER_CONFIG_FILE, ADAPTER_WEIGHTS_FILE, ...extra.map(([p]) => p)].sort();
}

/** What an adapter directory's config says, checked. */
export interface PeftLoraConfig {
  r: number;
  alpha: number;
  dropout: number;
  useRslora: boolean;
  targetModules: string[] | string;
  baseModel: string | null;
}

export function readPeftLoraConfig(path: string): PeftLoraConfig {
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new InputError(`cannot read the adapter config: ${(e as Error).message}`, { file: path });
  }
  const where = { file: path };
  if (raw.peft_type !== 'LORA') throw new InputError(`peft_type ${JSON.stringify(raw.peft_type)} is not supported (expected "LORA")`, where);
  const r = raw.r ?? 8;
  const alpha = raw.lora_alpha ?? 8;
  const dropout = raw.lora_dropout ?? 0;
  if (typeof r !== 'number' || !Number.isInteger(r) || r <= 0) throw new InputError(`'r' must be a positive integer, found ${JSON.stringify(r)}`, where);
  if (typeof alpha !== 'number' || !(alpha > 0)) throw new InputError(`'lora_alpha' must be a positive number, found ${JSON.stringify(alpha)}`, where);
  if (typeof dropout !== 'number' || !(dropout >= 0 && dropout < 1)) throw new InputError(`'lora_dropout' must be in [0, 1), found ${JSON.stringify(dropout)}`, where);
  const unsupported: string[] = [];
  if (raw.use_dora === true) unsupported.push('use_dora: true (DoRA)');
  if (raw.bias !== undefined && raw.bias !== 'none') unsupported.push(`bias: ${JSON.stringify(raw.bias)} (trained biases)`);
  if (Array.isArray(raw.modules_to_save) && raw.modules_to_save.length > 0) unsupported.push(`modules_to_save: ${JSON.stringify(raw.modules_to_save)}`);
  for (const k of ['rank_pattern', 'alpha_pattern']) {
    const v = raw[k];
    if (v && typeof v === 'object' && Object.keys(v).length > 0) unsupported.push(`${k}: ${JSON.stringify(v)} (per-module rank or alpha)`);
  }
  if (raw.fan_in_fan_out === true) unsupported.push('fan_in_fan_out: true (Conv1D weights)');
  if (unsupported.length > 0) throw new InputError(`adapter options not supported: ${unsupported.join('; ')}`, where);
  const targets = raw.target_modules;
  const targetModules = Array.isArray(targets) ? targets.map(String) : typeof targets === 'string' ? targets : [];
  const base = raw.base_model_name_or_path;
  return { r, alpha, dropout, useRslora: raw.use_rslora === true, targetModules, baseModel: typeof base === 'string' ? base : null };
}

/**
 * Reads a PEFT LoRA adapter directory and attaches its adapters to `model` (which must have none
 * on those modules), making them the only trainable parameters. Returns the adapted modules.
 */
export function loadLoraAdapter(dir: string, model: AdaptableModel): string[] {
  const cfgPath = join(dir, ADAPTER_CONFIG_FILE);
  const weightsPath = join(dir, ADAPTER_WEIGHTS_FILE);
  if (!existsSync(cfgPath)) throw new InputError(`adapter directory has no ${ADAPTER_CONFIG_FILE}`, { file: dir });
  if (!existsSync(weightsPath)) {
    const bin = existsSync(join(dir, 'adapter_model.bin')) ? ' (it has adapter_model.bin, a PyTorch pickle: re-save it with safe_serialization=True)' : '';
    throw new InputError(`adapter directory has no ${ADAPTER_WEIGHTS_FILE}${bin}`, { file: dir });
  }
  const cfg = readPeftLoraConfig(cfgPath);
  const tensors = readSafetensors(weightsPath).tensors;
  const modules = model.linearModules();
  const byModule = new Map<string, { A?: { shape: number[]; data: Float32Array }; B?: { shape: number[]; data: Float32Array } }>();
  const problems: string[] = [];
  for (const [name, t] of tensors) {
    const m = name.startsWith(PREFIX) ? /^(.*)\.lora_([AB])\.weight$/.exec(name.slice(PREFIX.length)) : null;
    if (!m) {
      problems.push(`'${name}' is not a LoRA matrix in PEFT's naming (${PREFIX}<module>.lora_A.weight / .lora_B.weight)`);
      continue;
    }
    // PEFT names modules as the base model names them; a bare LlamaModel has no inner `model.`.
    const module = modules.has(m[1]) ? m[1] : modules.has(`model.${m[1]}`) ? `model.${m[1]}` : undefined;
    if (!module) {
      problems.push(`'${name}': the model has no linear module '${m[1]}'`);
      continue;
    }
    if (!(t.data instanceof Float32Array)) {
      problems.push(`'${name}': integer tensor where LoRA weights are expected`);
      continue;
    }
    const [out, inp] = modules.get(module)!;
    const want = m[2] === 'A' ? [cfg.r, inp] : [out, cfg.r];
    if (t.shape.length !== 2 || t.shape[0] !== want[0] || t.shape[1] !== want[1]) {
      problems.push(`'${name}' has shape ${JSON.stringify(t.shape)}, the model's ${module} (in ${inp}, out ${out}) with r ${cfg.r} needs ${JSON.stringify(want)}`);
      continue;
    }
    const e = byModule.get(module) ?? {};
    e[m[2] as 'A' | 'B'] = { shape: t.shape, data: t.data };
    byModule.set(module, e);
  }
  for (const [module, e] of byModule) {
    if (!e.A || !e.B) problems.push(`module ${module} has lora_${e.A ? 'A' : 'B'} but no lora_${e.A ? 'B' : 'A'}`);
    if (model.adapters().has(module)) problems.push(`module ${module} already has an adapter`);
  }
  if (byModule.size === 0 && problems.length === 0) problems.push('no LoRA tensors in the file');
  if (problems.length > 0) throw new InputError(`adapter does not fit this model: ${problems.join('; ')}`, { file: weightsPath });
  for (const [module, e] of byModule) {
    const a = tf.tidy(() => loraVariable(module, 'A', tf.tensor(e.A!.data, e.A!.shape, 'float32')));
    const b = tf.tidy(() => loraVariable(module, 'B', tf.tensor(e.B!.data, e.B!.shape, 'float32')));
    model.attachAdapter(module, new LoraLinear(cfg.r, cfg.alpha, cfg.dropout, cfg.useRslora, a, b));
  }
  model.setTrainable(isLoraParameter);
  return [...byModule.keys()];
}
