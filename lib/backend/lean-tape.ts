/**
 * Gradients that keep what the backward pass needs and nothing else: `leanVariableGrads` has the
 * contract of `tf.variableGrads` (the loss and the gradients of the given variables, keyed by
 * variable name, the same numbers bit for bit) with tfjs's gradient tape made frugal the way
 * PyTorch's autograd is.
 *
 * What tfjs 4.22's tape does (tfjs-core engine.ts `gradients`, tape.ts `backpropagateGradients`)
 * and what changes here:
 *
 * 1. Saves. Every kernel keeps the tensors its gradient function names (`inputsToSave`,
 *    `outputsToSave`), whether or not the gradient that reads them is ever computed, and some
 *    gradient functions read a saved tensor only for its shape: Add and Sub keep both operands
 *    to undo broadcasting, Reshape keeps its input for the shape to reshape back to, Multiply and
 *    BatchMatMul keep an operand that only the other operand's gradient reads (x·W with a frozen
 *    W keeps x; x·0.5 keeps x). Each such save pins a buffer until the backward pass ends. Here,
 *    while the forward pass records, every save of the kernels in SAVE_RULES is checked against
 *    which inputs can carry a gradient (a variable being differentiated, or an output of a
 *    recorded op with such an input): a saved tensor that no computed gradient reads for its
 *    values is replaced by a stand-in with its shape and dtype and no buffer. PyTorch does the
 *    same (its autograd nodes save an operand only when the other one requires grad).
 * 2. Release during backward. tfjs keeps every saved tensor and every intermediate gradient
 *    (the dy of every op output, and the temporaries some gradient functions compute outside
 *    their closures, e.g. Softmax's dy·y) until the whole backward pass ends: the backward peak
 *    is all activations plus all their gradients. Here each op's saved tensors and the gradients
 *    of its outputs are freed as soon as the op's own gradient has been computed, each op's
 *    gradient runs in its own scope, and the saves of ops that do not lead from the variables to
 *    the loss (a pooler output no loss reads, the clones made for saving) are freed as soon as the
 *    forward pass ends.
 * 3. Frozen parameters: a variable not in `varList` gets no gradient computed at all (tfjs's
 *    pruning already skips it) and, by 1., no activation is kept for its sake.
 *
 * The engine methods used (`startTape`, `endTape`, `scopedRun`, `getTensorsForGradient`,
 * `saveTensorsForBackwardMode`, `state.activeTape`) are internal to @tensorflow/tfjs-core and were
 * written against 4.22; `leanTapeAvailable()` says whether they are there, and the trainer falls
 * back to `tf.variableGrads` when they are not. Inside another gradient computation (higher-order
 * gradients) this is `tf.variableGrads` itself.
 */
import * as tf from '@tensorflow/tfjs-core';

interface TapeNode {
  id: number;
  kernelName: string;
  inputs: Record<string, tf.Tensor>;
  outputs: tf.Tensor[];
  saved?: tf.Tensor[];
  gradient?: (dys: Array<tf.Tensor | null>) => Record<string, () => tf.Tensor>;
}

interface EngineInternals {
  state: { activeTape: TapeNode[] | null; gradientDepth: number };
  startTape(): void;
  endTape(): void;
  scopedRun<T>(start: () => void, end: () => void, f: () => T): T;
  tidy<T extends tf.TensorContainer>(name: string | (() => T), fn?: () => T): T;
  getTensorsForGradient(kernelName: string, inputs: Record<string, tf.Tensor>, outputs: tf.Tensor[]): tf.Tensor[];
  saveTensorsForBackwardMode(tensors: tf.Tensor[]): tf.Tensor[];
  keep<T extends tf.Tensor>(t: T): T;
  clone(t: tf.Tensor): tf.Tensor;
}

function engine(): EngineInternals {
  return tf.engine() as unknown as EngineInternals;
}

/** Whether this tfjs-core has the engine internals the lean tape relies on. */
export function leanTapeAvailable(): boolean {
  const e = engine() as unknown as Record<string, unknown>;
  return ['startTape', 'endTape', 'scopedRun', 'getTensorsForGradient', 'saveTensorsForBackwardMode', 'keep', 'clone'].every((m) => typeof e[m] === 'function');
}

// ---- 1. saves ------------------------------------------------------------------------------------

/**
 * Which saved tensors (in the order tfjs saves them: inputsToSave, then outputsToSave) a kernel's
 * gradient reads for their values, given which inputs will get a gradient. Read off the gradient
 * functions of tfjs-core 4.22 (src/gradients/*_grad.ts); kernels not listed keep all their saves.
 */
type SaveRule = (requiresGrad: (input: string) => boolean, slots: number) => boolean[];

const none: SaveRule = (_rg, slots) => new Array<boolean>(slots).fill(false);
/** grad(a) reads b and grad(b) reads a (shapes from both). */
const crosswise: SaveRule = (rg) => [rg('b'), rg('a')];

export const SAVE_RULES: Readonly<Record<string, SaveRule>> = {
  // Shapes only: broadcasting undone by reductions and reshapes, reshapes back, pads, splits.
  [tf.Add]: none,
  [tf.Sub]: none,
  [tf.Reshape]: none,
  [tf.ExpandDims]: none,
  [tf.Sum]: none,
  [tf.Mean]: none,
  [tf.Slice]: none,
  [tf.Concat]: none,
  [tf.Pack]: none,
  [tf.AddN]: none,
  [tf.PadV2]: none,
  [tf.Cumsum]: none,
  // x is read for its shape (the table the rows came from), the indices for their values.
  [tf.GatherV2]: () => [false, true],
  [tf.Multiply]: crosswise,
  [tf.BatchMatMul]: crosswise,
  // grad(a) = dy / b; grad(b) = −dy·a / b².
  [tf.RealDiv]: (rg) => [rg('b'), true],
  // saves a, b, y: grad(a) = dy·b·a^(b−1); grad(b) = dy·y·log(a).
  [tf.Pow]: (rg) => [true, rg('a'), rg('b')],
};

let standIns = 0;
const STAND_IN = Symbol('lean-tape stand-in');

/**
 * A tensor object with the shape and dtype of `t` and no buffer, for a save the gradient reads
 * only for its shape. Not tracked by the engine; a kernel given it fails (unknown data id).
 */
function standIn(t: tf.Tensor): tf.Tensor {
  const s = new tf.Tensor(t.shape, t.dtype, { standIn: true }, -1 - standIns++);
  (s as unknown as Record<symbol, boolean>)[STAND_IN] = true;
  return s;
}

function isStandIn(t: tf.Tensor): boolean {
  return (t as unknown as Record<symbol, boolean>)[STAND_IN] === true;
}

/** While a lean forward pass records: which tensors can carry a gradient, and the save filter. */
class SavePolicy {
  private readonly requiresGrad = new Set<number>();
  private scanned = 0;
  private readonly restore: () => void;
  /** Saves replaced by stand-ins, and saves kept (for reporting). */
  dropped = 0;
  kept = 0;

  constructor(
    private readonly e: EngineInternals,
    xs: readonly tf.Tensor[],
  ) {
    for (const x of xs) this.requiresGrad.add(x.id);
    const getTensorsForGradient = e.getTensorsForGradient;
    const saveTensorsForBackwardMode = e.saveTensorsForBackwardMode;
    const policy = this;
    e.getTensorsForGradient = function (this: EngineInternals, kernelName, inputs, outputs) {
      const tensors = getTensorsForGradient.call(this, kernelName, inputs, outputs);
      return policy.filter(kernelName, inputs, tensors);
    };
    e.saveTensorsForBackwardMode = function (this: EngineInternals, tensors) {
      return tensors.map((t) => (isStandIn(t) ? t : this.keep(this.clone(t))));
    };
    this.restore = () => {
      e.getTensorsForGradient = getTensorsForGradient;
      e.saveTensorsForBackwardMode = saveTensorsForBackwardMode;
    };
  }

  /** Marks the outputs of tape nodes recorded since the last call that have a gradient-carrying input. */
  private scan(): void {
    const tape = this.e.state.activeTape;
    if (!tape) return;
    for (; this.scanned < tape.length; this.scanned++) {
      const node = tape[this.scanned];
      if (Object.values(node.inputs).some((t) => t && this.requiresGrad.has(t.id))) for (const o of node.outputs) this.requiresGrad.add(o.id);
    }
  }

  private filter(kernelName: string, inputs: Record<string, tf.Tensor>, tensors: tf.Tensor[]): tf.Tensor[] {
    const rule = SAVE_RULES[kernelName];
    if (!rule || tensors.length === 0) {
      this.kept += tensors.length;
      return tensors;
    }
    this.scan();
    const needed = rule((name) => {
      const t = inputs[name];
      return t !== undefined && t !== null && this.requiresGrad.has(t.id);
    }, tensors.length);
    return tensors.map((t, i) => {
      if (needed[i] ?? true) {
        this.kept++;
        return t;
      }
      this.dropped++;
      return standIn(t);
    });
  }

  dispose(): void {
    this.restore();
  }
}

// ---- 2. backward ---------------------------------------------------------------------------------

/** tfjs's getFilteredNodesXToY (tape.ts, not exported): the nodes on a path from xs to y, inputs pruned to those from xs. */
function nodesFromXsToY(tape: TapeNode[], xs: readonly tf.Tensor[], y: tf.Tensor): TapeNode[] {
  const fromX = new Set<number>(xs.map((x) => x.id));
  const nodesFromX = new Set<number>();
  for (const node of tape) {
    if (Object.values(node.inputs).some((t) => fromX.has(t.id))) {
      for (const o of node.outputs) fromX.add(o.id);
      nodesFromX.add(node.id);
    }
  }
  const leadToY = new Set<number>([y.id]);
  const nodesToY = new Set<number>();
  for (let i = tape.length - 1; i >= 0; i--) {
    const node = tape[i];
    if (node.outputs.some((o) => leadToY.has(o.id))) {
      for (const t of Object.values(node.inputs)) leadToY.add(t.id);
      nodesToY.add(node.id);
    }
  }
  const out: TapeNode[] = [];
  for (const node of tape) {
    if (!nodesFromX.has(node.id) || !nodesToY.has(node.id)) continue;
    const inputs: Record<string, tf.Tensor> = {};
    for (const [name, t] of Object.entries(node.inputs)) if (fromX.has(t.id)) inputs[name] = t;
    out.push({ ...node, inputs });
  }
  return out;
}

/** Gradients by tensor id, freed when their last reference goes. */
class GradientStore {
  private readonly byId = new Map<number, tf.Tensor>();
  private readonly refs = new Map<tf.Tensor, number>();

  get(id: number): tf.Tensor | undefined {
    return this.byId.get(id);
  }

  holds(t: tf.Tensor): boolean {
    return (this.refs.get(t) ?? 0) > 0;
  }

  set(id: number, t: tf.Tensor): void {
    this.take(id);
    this.byId.set(id, t);
    this.refs.set(t, (this.refs.get(t) ?? 0) + 1);
  }

  /** Removes the gradient of `id` from the store and returns it (the caller owns it unless still referenced). */
  take(id: number): tf.Tensor | undefined {
    const t = this.byId.get(id);
    if (!t) return undefined;
    this.byId.delete(id);
    const n = (this.refs.get(t) ?? 1) - 1;
    if (n > 0) this.refs.set(t, n);
    else this.refs.delete(t);
    return t;
  }

  /** Removes and frees the gradient of `id` when nothing else references the tensor. */
  drop(id: number): void {
    const t = this.take(id);
    if (t && !this.holds(t)) t.dispose();
  }

  disposeAll(): void {
    for (const t of this.refs.keys()) t.dispose();
    this.byId.clear();
    this.refs.clear();
  }
}

function disposeSaved(node: TapeNode, grads: GradientStore): void {
  for (const t of node.saved ?? []) if (!grads.holds(t)) t.dispose();
  node.saved = [];
}

/** What a lean gradient computation reports besides the gradients (for benchmarks). */
export interface LeanTapeStats {
  /** Saves kept, and saves replaced by shape-only stand-ins. */
  savesKept: number;
  savesDropped: number;
  /** Recorded ops, and those on a path from the variables to the loss. */
  tapeNodes: number;
  backwardNodes: number;
}

let lastStats: LeanTapeStats | undefined;

/** The statistics of the last leanVariableGrads call in this process. */
export function lastLeanTapeStats(): LeanTapeStats | undefined {
  return lastStats;
}

/**
 * The loss `f()` and its gradients with respect to `varList` (default: every trainable variable),
 * keyed by variable name, like tf.variableGrads; variables without a path to the loss get no entry.
 * Keeps only what the gradients read and frees it as soon as it has been read (see the top of the file).
 */
export function leanVariableGrads(f: () => tf.Scalar, varList?: tf.Variable[]): { value: tf.Scalar; grads: tf.NamedTensorMap } {
  if (engine().state.gradientDepth > 0 || !leanTapeAvailable()) return tf.variableGrads(f, varList);
  const registered = (tf.engine() as unknown as { registeredVariables: Record<string, tf.Variable> }).registeredVariables;
  const xs = varList ?? Object.values(registered).filter((v) => v.trainable);
  if (xs.length === 0) throw new Error('leanVariableGrads: no variables to differentiate (varList is empty and no variable is trainable)');
  const { value, grads } = leanGradients(f, xs);
  if (value.rank !== 0) {
    tf.dispose([value, ...grads.filter((g): g is tf.Tensor => g !== null)]);
    throw new Error(`leanVariableGrads: f() must return a scalar tensor, got shape [${value.shape}]`);
  }
  const named: tf.NamedTensorMap = {};
  xs.forEach((x, i) => {
    const g = grads[i];
    if (g) named[x.name] = g;
  });
  if (Object.keys(named).length === 0) throw new Error('Cannot find a connection between any variable and the result of the loss function y=f(x).');
  return { value: value as tf.Scalar, grads: named };
}

/**
 * y = f() and the gradients of Σ y·dy (dy default: ones, i.e. of y itself for a scalar) with
 * respect to each of `xs` (null for one without a path to y), computed with the lean tape. Also
 * callable while another gradient computation's backward pass runs (a checkpointed layer's
 * recomputation, ../ops/checkpoint.ts): the outer tape is put back afterwards.
 */
export function leanGradients(f: () => tf.Tensor, xs: readonly tf.Tensor[], dy?: tf.Tensor): { value: tf.Tensor; grads: Array<tf.Tensor | null> } {
  const e = engine();
  if (e.state.gradientDepth > 0 || !leanTapeAvailable()) {
    // Inside a forward pass being recorded (higher-order gradients): tfjs's own tape.
    const r = tf.engine().gradients(f, xs as tf.Tensor[], dy, true);
    return { value: r.value, grads: r.grads };
  }
  if (xs.length === 0) throw new Error('leanGradients: no tensors to differentiate with respect to');
  const outerTape = e.state.activeTape;
  const policy = new SavePolicy(e, xs);
  let y: tf.Tensor;
  try {
    y = e.scopedRun(
      () => e.startTape(),
      () => e.endTape(),
      () => e.tidy('forward', f),
    );
  } catch (err) {
    e.state.activeTape = outerTape;
    throw err;
  } finally {
    policy.dispose();
  }
  if (!(y instanceof tf.Tensor)) {
    e.state.activeTape = outerTape;
    throw new Error(`leanGradients: f() must return a tensor, got ${typeof y}`);
  }
  if (dy && !tf.util.arraysEqual(dy.shape, y.shape)) {
    e.state.activeTape = outerTape;
    throw new Error(`leanGradients: dy has shape [${dy.shape}], f() returned [${y.shape}]`);
  }
  const tape = e.state.activeTape ?? [];
  const filtered = nodesFromXsToY(tape, xs, y);
  lastStats = { savesKept: policy.kept, savesDropped: policy.dropped, tapeNodes: tape.length, backwardNodes: filtered.length };
  // Saves of ops off the path from xs to y are never read: free them now.
  const onPath = new Set(filtered.map((n) => n.id));
  const grads = new GradientStore();
  try {
    for (const node of tape) if (!onPath.has(node.id)) disposeSaved(node, grads);
    grads.set(y.id, tf.keep(dy ? dy.clone() : tf.onesLike(y)));
    for (let i = filtered.length - 1; i >= 0; i--) {
      const node = filtered[i];
      if (!node.gradient) throw new Error(`Cannot compute gradient: gradient function not found for ${node.kernelName}.`);
      const gradient = node.gradient;
      // One scope per op: temporaries its gradient function makes outside the per-input
      // closures (e.g. Softmax's dy·y) go with it.
      const ids: number[] = [];
      const results = e.tidy(() => {
        const dys = node.outputs.map((o) => grads.get(o.id) ?? null);
        const inputGradients = gradient(dys);
        const acc = new Map<number, tf.Tensor>();
        for (const [name, x] of Object.entries(node.inputs)) {
          if (!(name in inputGradients)) throw new Error(`Cannot backprop through input ${name}. Available gradients found: ${Object.keys(inputGradients)}.`);
          const dx = inputGradients[name]();
          if (dx.dtype !== 'float32') throw new Error(`Error in gradient for op ${node.kernelName}. The gradient of input ${name} must have 'float32' dtype, but has '${dx.dtype}'`);
          if (!tf.util.arraysEqual(dx.shape, x.shape)) {
            throw new Error(`Error in gradient for op ${node.kernelName}. The gradient of input '${name}' has shape '${dx.shape}', which does not match the shape of the input '${x.shape}'`);
          }
          const previous = acc.get(x.id) ?? grads.get(x.id);
          acc.set(x.id, previous ? tf.add(previous, dx) : dx);
        }
        ids.push(...acc.keys());
        return [...acc.values()];
      }) as tf.Tensor[];
      ids.forEach((id, k) => {
        const g = tf.keep(results[k]);
        const previous = grads.take(id);
        grads.set(id, g);
        if (previous && previous !== g && !grads.holds(previous)) previous.dispose();
      });
      // The gradients of this op's outputs and its saves have been read for the last time.
      for (const o of node.outputs) grads.drop(o.id);
      disposeSaved(node, grads);
    }
    // Clones (the same buffers) that belong to the caller's scope, as tf.grads' results do.
    const out = xs.map((x) => grads.get(x.id)?.clone() ?? null);
    return { value: y, grads: out };
  } finally {
    grads.disposeAll();
    for (const node of tape) disposeSaved(node, grads);
    e.state.activeTape = outerTape;
  }
}
