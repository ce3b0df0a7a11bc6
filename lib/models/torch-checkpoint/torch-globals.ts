/**
 * The Python globals a PyTorch checkpoint of tensors needs, and nothing else: the unpickle policy
 * of ./unpickler.ts for `torch.save` files.
 *
 * `torch.save(state_dict)` pickles each tensor as a call
 *   torch._utils._rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks[, metadata])
 * whose `storage` is a persistent id ('storage', torch.FloatStorage, key, location, numel) that
 * names the bytes stored beside the pickle; parameters wrap that in
 * torch._utils._rebuild_parameter(tensor, requires_grad, backward_hooks), and the dict itself is
 * collections.OrderedDict() (torch/_tensor.py `_reduce_ex_internal`, torch/serialization.py
 * `_save` / `_legacy_save`; seen in files Debian's torch 1.13 writes, test/fixtures/torch/).
 * Allowed besides: `_rebuild_tensor` (old files), `_rebuild_tensor_v3` (an untyped storage
 * with an explicit dtype), `_rebuild_parameter_with_state`, `torch.Size`, the `torch.*Storage`
 * classes and `torch.storage.UntypedStorage` as persistent-id types, `torch.<dtype>` values and
 * `_codecs.encode(text, 'latin1')` (how protocol 2 stores Python 3 bytes). Calling any of them
 * builds a description (TorchTensorRef) and runs no Python. Every other global — `posix.system`,
 * `builtins.eval`, a model class — is refused with its name.
 */
import { InputError } from '../../util/errors.js';
import { DTYPE_BYTES, type SafetensorsDtype } from '../safetensors.js';
import { describePyValue, PyFunction, PyTuple, type UnpicklePolicy } from './unpickler.js';

/** A storage named by a persistent id: `numel` elements of `dtype`, stored under `key`. */
export interface TorchStorageRef {
  key: string;
  /** Element type of the storage (U8 for an untyped storage). */
  dtype: SafetensorsDtype;
  numel: number;
  location: string;
  /** The Python class named in the persistent id, e.g. torch.HalfStorage. */
  storageType: string;
}

/** A tensor as the pickle describes it: a strided view into a storage. */
export interface TorchTensorRef {
  storage: TorchStorageRef;
  dtype: SafetensorsDtype;
  /** In elements of `dtype`. */
  storageOffset: number;
  shape: number[];
  stride: number[];
}

/** A `torch.<dtype>` value (e.g. torch.float16) appearing as data in a pickle. */
export class TorchDtypeValue {
  constructor(
    readonly name: string,
    readonly dtype: SafetensorsDtype | undefined,
  ) {}
}

/** A `torch.*Storage` class, only ever used as the type in a persistent id. */
export class TorchStorageType {
  constructor(
    readonly qualifiedName: string,
    readonly dtype: SafetensorsDtype,
  ) {}
}

export function isTorchTensorRef(v: unknown): v is TorchTensorRef {
  return typeof v === 'object' && v !== null && 'storage' in v && 'stride' in v && 'storageOffset' in v;
}

const STORAGE_DTYPES: Record<string, SafetensorsDtype> = {
  FloatStorage: 'F32', DoubleStorage: 'F64', HalfStorage: 'F16', BFloat16Storage: 'BF16',
  LongStorage: 'I64', IntStorage: 'I32', ShortStorage: 'I16', CharStorage: 'I8', ByteStorage: 'U8', BoolStorage: 'BOOL',
  UntypedStorage: 'U8',
};

/** torch dtype names (and their aliases) that map onto a dtype this project reads. */
const TORCH_DTYPES: Record<string, SafetensorsDtype> = {
  float32: 'F32', float: 'F32', float64: 'F64', double: 'F64', float16: 'F16', half: 'F16', bfloat16: 'BF16',
  int64: 'I64', long: 'I64', int32: 'I32', int: 'I32', int16: 'I16', short: 'I16', int8: 'I8', uint8: 'U8', bool: 'BOOL',
};
/** Other torch dtypes: recognised (so a file that merely names one is not "malicious"), never read. */
const OTHER_TORCH_DTYPES = ['complex32', 'complex64', 'complex128', 'cfloat', 'cdouble', 'chalf', 'qint8', 'quint8', 'qint32', 'quint4x2', 'float8_e4m3fn', 'float8_e5m2', 'uint16', 'uint32', 'uint64'];

/** The globals this reader allows, for error messages. */
export const ALLOWED_GLOBALS = [
  'collections.OrderedDict',
  'torch._utils._rebuild_tensor_v2',
  'torch._utils._rebuild_tensor',
  'torch._utils._rebuild_tensor_v3',
  'torch._utils._rebuild_parameter',
  'torch._utils._rebuild_parameter_with_state',
  'torch.Size',
  'torch.<Type>Storage',
  'torch.storage.UntypedStorage',
  'torch.<dtype>',
  '_codecs.encode',
] as const;

function int(v: unknown, what: string, min = 0): number {
  if (typeof v === 'bigint') throw new Error(`${what} ${v} is beyond 2^53`);
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min) throw new Error(`${what} must be an integer >= ${min}, found ${describePyValue(v)}`);
  return v;
}

function ints(v: unknown, what: string): number[] {
  const items = v instanceof PyTuple ? v.items : Array.isArray(v) ? v : undefined;
  if (!items) throw new Error(`${what} must be a tuple of integers, found ${describePyValue(v)}`);
  return items.map((x, i) => int(x, `${what}[${i}]`));
}

function rebuild(storage: unknown, offset: unknown, size: unknown, stride: unknown, dtype?: SafetensorsDtype): TorchTensorRef {
  if (typeof storage !== 'object' || storage === null || !('key' in storage) || !('numel' in storage)) {
    throw new Error(`the storage argument is ${describePyValue(storage)}, not a storage persistent id`);
  }
  const shape = ints(size, 'size');
  const strides = ints(stride, 'stride');
  if (strides.length !== shape.length) throw new Error(`size has ${shape.length} dimensions but stride has ${strides.length}`);
  return { storage: storage as TorchStorageRef, dtype: dtype ?? (storage as TorchStorageRef).dtype, storageOffset: int(offset, 'storage_offset'), shape, stride: strides };
}

function tensorArg(v: unknown, fn: string): TorchTensorRef {
  if (!isTorchTensorRef(v)) throw new Error(`${fn} needs a tensor, found ${describePyValue(v)}`);
  return v;
}

const FUNCTIONS: Record<string, (args: readonly unknown[]) => unknown> = {
  'collections.OrderedDict': (args) => {
    if (args.length === 0) return new Map();
    // OrderedDict([(k, v), ...]): pairs given as a list or tuple of 2-tuples.
    const items = args[0] instanceof PyTuple ? args[0].items : Array.isArray(args[0]) ? args[0] : undefined;
    if (args.length > 1 || !items) throw new Error(`expected no argument or one list of pairs, found ${args.map(describePyValue).join(', ')}`);
    const m = new Map<unknown, unknown>();
    for (const p of items) {
      if (!(p instanceof PyTuple) || p.items.length !== 2) throw new Error(`a pair must be a 2-tuple, found ${describePyValue(p)}`);
      m.set(p.items[0], p.items[1]);
    }
    return m;
  },
  // (storage, storage_offset, size, stride, requires_grad, backward_hooks[, metadata])
  'torch._utils._rebuild_tensor_v2': (a) => {
    if (a.length < 6 || a.length > 7) throw new Error(`expected 6 or 7 arguments, found ${a.length}`);
    return rebuild(a[0], a[1], a[2], a[3]);
  },
  // (storage, storage_offset, size, stride)
  'torch._utils._rebuild_tensor': (a) => {
    if (a.length !== 4) throw new Error(`expected 4 arguments, found ${a.length}`);
    return rebuild(a[0], a[1], a[2], a[3]);
  },
  // (storage, storage_offset, size, stride, requires_grad, backward_hooks, dtype[, metadata]): an untyped storage viewed as dtype
  'torch._utils._rebuild_tensor_v3': (a) => {
    if (a.length < 7 || a.length > 8) throw new Error(`expected 7 or 8 arguments, found ${a.length}`);
    if (!(a[6] instanceof TorchDtypeValue)) throw new Error(`argument 7 must be a torch dtype, found ${describePyValue(a[6])}`);
    if (!a[6].dtype) throw new Error(`tensors of torch.${a[6].name} are not supported (readable: ${Object.keys(TORCH_DTYPES).join(', ')})`);
    return rebuild(a[0], a[1], a[2], a[3], a[6].dtype);
  },
  // (data, requires_grad, backward_hooks)
  'torch._utils._rebuild_parameter': (a) => {
    if (a.length !== 3) throw new Error(`expected 3 arguments, found ${a.length}`);
    return tensorArg(a[0], '_rebuild_parameter');
  },
  // (data, requires_grad, backward_hooks, state)
  'torch._utils._rebuild_parameter_with_state': (a) => {
    if (a.length !== 4) throw new Error(`expected 4 arguments, found ${a.length}`);
    return tensorArg(a[0], '_rebuild_parameter_with_state');
  },
  'torch.Size': (a) => new PyTuple(ints(a[0] ?? new PyTuple([]), 'torch.Size')),
  // Protocol 2 stores Python 3 bytes as _codecs.encode(text, 'latin1'): code points 0-255 are the bytes.
  '_codecs.encode': (a) => {
    const [s, enc] = a;
    if (typeof s !== 'string' || (enc !== 'latin1' && enc !== 'latin-1')) throw new Error(`only _codecs.encode(str, 'latin1') is evaluated, found (${a.map(describePyValue).join(', ')})`);
    const out = new Uint8Array(s.length);
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c > 255) throw new Error('a latin1 string with a code point above 255');
      out[i] = c;
    }
    return out;
  },
};

function refuse(qualified: string, file: string, what: string): never {
  throw new InputError(
    `${what}: refused the Python global '${qualified}': only tensor reconstruction is allowed (${ALLOWED_GLOBALS.join(', ')}) ` +
      'and this pickle asks for other code, which was not run. If you trust the file, load it in PyTorch and save its state dict as safetensors',
    { file },
  );
}

/** What GLOBAL module.name stands for, or an InputError naming it. */
export function resolveTorchGlobal(module: string, name: string, file: string, what: string): unknown {
  const qualified = `${module}.${name}`;
  const fn = FUNCTIONS[qualified];
  if (fn) return new PyFunction(qualified, fn);
  if ((module === 'torch' || module === 'torch.storage') && Object.prototype.hasOwnProperty.call(STORAGE_DTYPES, name)) {
    if (module === 'torch.storage' && name !== 'UntypedStorage') refuse(qualified, file, what);
    return new TorchStorageType(qualified, STORAGE_DTYPES[name]);
  }
  if (module === 'torch' && (Object.prototype.hasOwnProperty.call(TORCH_DTYPES, name) || OTHER_TORCH_DTYPES.includes(name))) {
    return new TorchDtypeValue(name, TORCH_DTYPES[name]);
  }
  if (module === 'torch' && /Storage$/.test(name)) {
    throw new InputError(`${what}: storages of type '${qualified}' are not supported (readable: ${Object.keys(STORAGE_DTYPES).join(', ')})`, { file });
  }
  return refuse(qualified, file, what);
}

/**
 * The unpickle policy for a torch.save pickle. Persistent ids become TorchStorageRefs (one per
 * key); `legacy` selects the pre-1.6 id layout, which has a sixth item (a storage view, refused).
 */
export function torchPolicy(file: string, what: string, legacy: boolean): UnpicklePolicy & { storages: Map<string, TorchStorageRef> } {
  const storages = new Map<string, TorchStorageRef>();
  const str = (v: unknown, field: string): string => {
    if (typeof v === 'string') return v;
    if (v instanceof Uint8Array) return new TextDecoder('ascii').decode(v);
    throw new InputError(`${what}: persistent id ${field} is ${describePyValue(v)}, not a string`, { file });
  };
  return {
    storages,
    resolveGlobal: (module, name) => resolveTorchGlobal(module, name, file, what),
    persistentLoad(pid) {
      if (!(pid instanceof PyTuple) || pid.items.length === 0) throw new InputError(`${what}: persistent id ${describePyValue(pid)} is not a tuple`, { file });
      const kind = str(pid.items[0], 'type');
      if (kind === 'module') {
        throw new InputError(`${what}: the file pickles a whole nn.Module (with its source), not a state dict; load it in PyTorch and save model.state_dict()`, { file });
      }
      if (kind !== 'storage') throw new InputError(`${what}: unknown persistent id type '${kind}' (expected 'storage')`, { file });
      const want = legacy ? 6 : 5;
      if (pid.items.length !== want) throw new InputError(`${what}: a storage persistent id has ${pid.items.length} items, expected ${want}`, { file });
      const [, type, rawKey, rawLocation, rawNumel] = pid.items;
      if (!(type instanceof TorchStorageType)) throw new InputError(`${what}: persistent id names ${describePyValue(type)} instead of a torch storage type`, { file });
      if (legacy && pid.items[5] !== null) throw new InputError(`${what}: storage views (pre-1.0 PyTorch files) are not supported`, { file });
      const key = str(rawKey, 'key');
      const location = str(rawLocation, 'location');
      let numel: number;
      try {
        numel = int(rawNumel, 'storage size');
      } catch (e) {
        throw new InputError(`${what}: storage '${key}': ${(e as Error).message}`, { file });
      }
      const known = storages.get(key);
      if (known) {
        if (known.dtype !== type.dtype || known.numel !== numel) {
          throw new InputError(`${what}: storage '${key}' is named twice with different types (${known.storageType}[${known.numel}], ${type.qualifiedName}[${numel}])`, { file });
        }
        return known;
      }
      const ref: TorchStorageRef = { key, dtype: type.dtype, numel, location, storageType: type.qualifiedName };
      storages.set(key, ref);
      return ref;
    },
  };
}

/** Bytes of a storage. */
export function storageBytes(s: TorchStorageRef): number {
  return s.numel * DTYPE_BYTES[s.dtype];
}
