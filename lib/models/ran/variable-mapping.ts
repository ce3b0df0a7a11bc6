/**
 * Which TensorFlow checkpoint variables hold RanNet's weights, as `rannet` 0.3.1 names them
 * (github 4AI/RAN, tag v0.3.1, commit 29df77b0bbc32129a0ec7ace934d575b0424aacd, read for this file):
 *
 * - `RanNet.variable_mapping` (rannet.py:250-315) lists, per Keras layer (`Token-Embedding`,
 *   `Embedding-LayerNorm`, `RAN-<i>`, `MLM-Hidden`, `MLM-Matching`), the checkpoint variables
 *   of its weights; `ranVariableMapping` is that table, in its order.
 * - `restore_weights_from_checkpoint` (rannet.py:359-395) derives each checkpoint name from a
 *   Keras weight name (`get_var_name`: drop `:0` and the model prefix, lower-case, put the layer
 *   name in front when the weight name lacks it, drop the `/cell-initializer-group` and
 *   `/window-loop` scopes, prepend `rannet/`), restores every layer of the mapping and skips the
 *   MLM layers when the checkpoint lacks them; `ranVariableName` is `get_var_name`.
 * - `export_checkpoint` (rannet.py:328-357) wrote the released `model.ckpt` from a training one:
 *   it drops optimizer slots, `global_step` and `_CHECKPOINTABLE_OBJECT_GRAPH`, renames the rest,
 *   in order, to the mapping's names, and saves them with `tf.compat.v1.train.Saver` (a tensor
 *   bundle, ./tf-checkpoint.ts). `readRanCheckpointTensors` reads those variables back.
 *   The renaming was positional (`tf.train.list_variables`' sorted names zipped with the mapping's
 *   order, with a substring check on some fields), so whatever it assigned is baked into the
 *   release under these names; reading by name, as rannet's restore does, reproduces rannet
 *   exactly. A shape check catches a kernel/bias mix-up, not a swap of equal-shaped tensors
 *   (dense-t / dense-g), which rannet would load the same way.
 *
 * The golden set (../shared/golden/ran-tiny-seed11/README.md, "Files") stores its weights under
 * these same names, plus the `apply_cell_transform` head (`rannet/output-cell-*`,
 * `rannet/output-pooling-dense`), which is not in a released checkpoint and is read here only when
 * asked for.
 */
import { InputError } from '../../util/errors.js';
import type { TfCheckpoint } from './tf-checkpoint.js';

/** The prefix every RanNet checkpoint variable carries (variable_mapping's `prefix` default). */
export const RAN_CHECKPOINT_PREFIX = 'rannet';

/** The variables of one RAN layer, in variable_mapping's order (rannet.py:262-306), without `<prefix>/ran-<i>/`. */
const RAN_LAYER_VARIABLES = [
  'cell-glu/dense-t/bias',
  'cell-glu/dense-t/kernel',
  'cell-glu/dense-g/bias',
  'cell-glu/dense-g/kernel',
  'cell-initializer/kernel',
  'cell-initializer-layernorm/beta',
  'cell-initializer-layernorm/gamma',
  'cell-residual-layernorm/beta',
  'cell-residual-layernorm/gamma',
  'concat-layernorm/beta',
  'concat-layernorm/gamma',
  'encode-attn/glu/dense-t/bias',
  'encode-attn/glu/dense-t/kernel',
  'encode-attn/glu/dense-g/bias',
  'encode-attn/glu/dense-g/kernel',
  'encode-attn/dense-k/bias',
  'encode-attn/dense-k/kernel',
  'encode-attn/layernorm/beta',
  'encode-attn/layernorm/gamma',
  'encode-attn/dense-o/bias',
  'encode-attn/dense-o/kernel',
  'encode-attn/dense-q/bias',
  'encode-attn/dense-q/kernel',
  'encode-attn/dense-v/bias',
  'encode-attn/dense-v/kernel',
  'output-attn/glu/dense-t/bias',
  'output-attn/glu/dense-t/kernel',
  'output-attn/glu/dense-g/bias',
  'output-attn/glu/dense-g/kernel',
  'output-attn/dense-k/bias',
  'output-attn/dense-k/kernel',
  'output-attn/layernorm/beta',
  'output-attn/layernorm/gamma',
  'output-attn/dense-o/bias',
  'output-attn/dense-o/kernel',
  'output-attn/dense-q/bias',
  'output-attn/dense-q/kernel',
  'output-attn/dense-v/bias',
  'output-attn/dense-v/kernel',
] as const;

/** The pre-training head's Keras layers: restored when present, skipped when not (rannet.py:389-393). */
export const RAN_MLM_LAYERS = ['MLM-Hidden', 'MLM-Matching'] as const;

/**
 * The `apply_cell_transform` head's variables under the golden set's naming convention (not
 * rannet's: a released checkpoint has no such variables; rannet initialises the head at random).
 */
export const RAN_CELL_TRANSFORM_VARIABLES = [
  'output-cell-dense/bias',
  'output-cell-dense/kernel',
  'output-cell-glu/dense-t/bias',
  'output-cell-glu/dense-t/kernel',
  'output-cell-glu/dense-g/bias',
  'output-cell-glu/dense-g/kernel',
  'output-pooling-dense/bias',
  'output-pooling-dense/kernel',
] as const;

/**
 * `RanNet.variable_mapping(prefix, ran_layers)`: Keras layer name -> its checkpoint variables,
 * in the order rannet lists them (the order `export_checkpoint` renamed a training checkpoint's
 * variables in).
 */
export function ranVariableMapping(ranLayers: number, prefix = RAN_CHECKPOINT_PREFIX): Map<string, string[]> {
  if (!Number.isInteger(ranLayers) || ranLayers < 1) throw new RangeError(`ran_layers must be a positive integer, got ${ranLayers}`);
  const m = new Map<string, string[]>();
  m.set('Token-Embedding', [`${prefix}/token-embedding/embeddings`]);
  m.set('Embedding-LayerNorm', [`${prefix}/embedding-layernorm/beta`, `${prefix}/embedding-layernorm/gamma`]);
  for (let i = 0; i < ranLayers; i++) m.set(`RAN-${i}`, RAN_LAYER_VARIABLES.map((v) => `${prefix}/ran-${i}/${v}`));
  m.set('MLM-Hidden', [`${prefix}/mlm-hidden/dense/bias`, `${prefix}/mlm-hidden/dense/kernel`, `${prefix}/mlm-hidden/layernorm/beta`, `${prefix}/mlm-hidden/layernorm/gamma`]);
  m.set('MLM-Matching', [`${prefix}/mlm-matching/bias`]);
  return m;
}

/** The encoder's checkpoint variables (every layer of the mapping but the MLM head), in mapping order. */
export function ranEncoderVariableNames(ranLayers: number, prefix = RAN_CHECKPOINT_PREFIX): string[] {
  const mlm = new Set<string>(RAN_MLM_LAYERS);
  return [...ranVariableMapping(ranLayers, prefix)].filter(([layer]) => !mlm.has(layer)).flatMap(([, names]) => names);
}

/**
 * `get_var_name` (rannet.py:370-377): the checkpoint variable of a Keras weight, e.g. layer
 * `RAN-0`, weight `RAN-0/window-loop/encode-attn/dense-q/kernel:0` -> `rannet/ran-0/encode-attn/dense-q/kernel`
 * (under TF >= 2.5 the weight name lacks the layer scope: `encode-attn/dense-q/kernel:0`, same result).
 * `modelPrefix` is RanNet's `prefix` argument (several RanNets in one Keras model), removed as rannet does.
 */
export function ranVariableName(layerName: string, kerasWeightName: string, modelPrefix = ''): string {
  const p = modelPrefix.replace(/-+$/, '');
  const strip = (s: string) => (modelPrefix ? s.split(`${p}-`).join('') : s);
  let w = strip(kerasWeightName.split(':')[0]).toLowerCase();
  // rannet compares the (prefixed) layer name as get_weight_name returned it.
  const layer = (p ? `${p}-${layerName}` : layerName).toLowerCase();
  if (layer !== w.split('/')[0]) w = `${layer}/${w}`;
  for (const scope of ['/cell-initializer-group', '/window-loop']) w = w.split(scope).join('');
  return `${RAN_CHECKPOINT_PREFIX}/${w}`;
}

/**
 * Variables a training checkpoint carries besides the weights, which `export_checkpoint` drops
 * (rannet.py:339-340: names containing these); a released checkpoint may still hold them.
 */
export function isRanTrainingStateVariable(name: string): boolean {
  return name.includes('optimizer') || name.includes('global_step') || name.includes('_CHECKPOINTABLE_OBJECT_GRAPH');
}

export interface RanCheckpointTensor {
  shape: number[];
  data: Float32Array;
}

export interface ReadRanCheckpointOptions {
  /** Expected Keras shapes by checkpoint name (e.g. weights.ts `ranCheckpointShapes(cfg)`); checked before any data is read. */
  shapes?: ReadonlyMap<string, readonly number[]>;
  /** Also read the MLM head when the checkpoint has it (default false: the encoder does not use it). */
  mlm?: boolean;
  /** Also read the golden set's `apply_cell_transform` head when all of it is there (default false). */
  cellTransform?: boolean;
}

/**
 * The RanNet weights of an open checkpoint (./tf-checkpoint.ts), under their checkpoint names:
 * every encoder variable of `ranVariableMapping(ranLayers)` (and, if asked, the heads), each
 * float32 and CRC-checked, read one at a time. A missing variable, another dtype or a shape that
 * differs from `options.shapes` is one InputError line naming the variable and the index file;
 * other variables (training state, anything rannet does not restore) are left unread, as
 * rannet's restore leaves them.
 */
export function readRanCheckpointTensors(ckpt: TfCheckpoint, ranLayers: number, options: ReadRanCheckpointOptions = {}): Map<string, RanCheckpointTensor> {
  const wanted = ranEncoderVariableNames(ranLayers);
  const mapping = ranVariableMapping(ranLayers);
  const mlm = RAN_MLM_LAYERS.flatMap((l) => mapping.get(l)!);
  if (options.mlm && mlm.every((n) => ckpt.has(n))) wanted.push(...mlm);
  const head = RAN_CELL_TRANSFORM_VARIABLES.map((v) => `${RAN_CHECKPOINT_PREFIX}/${v}`);
  if (options.cellTransform && head.every((n) => ckpt.has(n))) wanted.push(...head);
  const file = ckpt.indexFile;
  const missing = wanted.filter((n) => !ckpt.has(n));
  if (missing.length > 0) {
    const present = ckpt.names().filter((n) => !isRanTrainingStateVariable(n));
    const sample = present.slice(0, 3).map((n) => `'${n}'`).join(', ');
    throw new InputError(
      `checkpoint variable '${missing[0]}' is missing${missing.length > 1 ? ` (and ${missing.length - 1} more of the ${wanted.length} RanNet.variable_mapping names for ${ranLayers} layers)` : ''}; the checkpoint has ${present.length} variables${sample ? `, e.g. ${sample}` : ''}`,
      { file },
    );
  }
  for (const name of wanted) {
    const info = ckpt.info(name);
    if (info.dtype !== 'float32') throw new InputError(`checkpoint variable '${name}' is ${info.dtype}, expected float32`, { file });
    const want = options.shapes?.get(name);
    if (want && (want.length !== info.shape.length || want.some((d, i) => d !== info.shape[i]))) {
      throw new InputError(`checkpoint variable '${name}' has shape [${info.shape.join(', ')}], the config expects [${want.join(', ')}]`, { file });
    }
  }
  const out = new Map<string, RanCheckpointTensor>();
  for (const name of wanted) {
    const t = ckpt.tensor(name);
    out.set(name, { shape: t.shape, data: t.data as Float32Array });
  }
  return out;
}
