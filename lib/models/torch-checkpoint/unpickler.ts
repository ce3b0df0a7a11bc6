/**
 * A restricted reader of Python's pickle format (protocols 2 to 5) that executes nothing.
 *
 * A pickle is a program for a small stack machine; `pickle.load` runs it, and its GLOBAL/REDUCE
 * opcodes import and call arbitrary Python callables, which is why loading an untrusted
 * `pytorch_model.bin` can run code. This reader interprets the data opcodes itself (numbers,
 * strings, bytes, tuples, lists, dicts, sets, the memo) and hands every reference to code to a
 * policy: GLOBAL / STACK_GLOBAL ask `policy.resolveGlobal(module, name)`, which returns a value
 * that stands for an allowed global or throws naming the refused one; REDUCE calls only
 * `PyFunction`s the policy returned; BINPERSID asks `policy.persistentLoad(pid)`. The opcodes that
 * instantiate classes directly (INST, OBJ, NEWOBJ, NEWOBJ_EX, EXT1/2/4) and out-of-band buffers
 * are refused. The same idea as PyTorch's own `torch.load(weights_only=True)`
 * (torch/_weights_only_unpickler.py), written here from the opcode table of CPython's
 * Lib/pickle.py and pickletools.py.
 *
 * Python values map to JavaScript as: None → null, bool → boolean, int → number (bigint beyond
 * 2^53), float → number, str → string, bytes/bytearray → Uint8Array, list → Array, tuple →
 * PyTuple, dict → Map, set/frozenset → Set. Malformed input (an unknown opcode, a length past the
 * end, a stack underflow, a missing STOP) is an InputError naming the file, the byte and the opcode.
 */
import { InputError } from '../../util/errors.js';

/** A Python tuple; kept apart from lists because persistent ids and call arguments are tuples. */
export class PyTuple {
  constructor(readonly items: readonly unknown[]) {}
}

/** A callable the policy allows REDUCE to call, under its Python name. */
export class PyFunction {
  constructor(
    readonly qualifiedName: string,
    readonly call: (args: readonly unknown[]) => unknown,
  ) {}
}

export interface UnpicklePolicy {
  /** What GLOBAL module.name stands for; throws (naming it) when it is not allowed. */
  resolveGlobal(module: string, name: string): unknown;
  /** What a persistent id (BINPERSID) stands for; throws when it is not understood. */
  persistentLoad(pid: unknown): unknown;
}

/** Bytes the unpickler reads, from memory or from a file. */
export interface PickleInput {
  /** Current position (absolute, for messages and for what follows the pickle). */
  readonly position: number;
  /** Bytes left before the end of the input. */
  readonly remaining: number;
  readByte(): number;
  read(n: number): Uint8Array;
}

export class BufferInput implements PickleInput {
  private at: number;
  constructor(
    private readonly buf: Uint8Array,
    start = 0,
  ) {
    this.at = start;
  }
  get position(): number {
    return this.at;
  }
  get remaining(): number {
    return this.buf.byteLength - this.at;
  }
  readByte(): number {
    if (this.at >= this.buf.byteLength) throw new RangeError('end of input');
    return this.buf[this.at++];
  }
  read(n: number): Uint8Array {
    if (n > this.remaining) throw new RangeError('end of input');
    const out = this.buf.subarray(this.at, this.at + n);
    this.at += n;
    return out;
  }
}

// Opcodes (CPython Lib/pickle.py).
const OP = {
  MARK: 0x28, STOP: 0x2e, POP: 0x30, POP_MARK: 0x31, DUP: 0x32, FLOAT: 0x46, INT: 0x49, BININT: 0x4a, BININT1: 0x4b,
  LONG: 0x4c, BININT2: 0x4d, NONE: 0x4e, PERSID: 0x50, BINPERSID: 0x51, REDUCE: 0x52, STRING: 0x53, BINSTRING: 0x54,
  SHORT_BINSTRING: 0x55, UNICODE: 0x56, BINUNICODE: 0x58, APPEND: 0x61, BUILD: 0x62, GLOBAL: 0x63, DICT: 0x64,
  EMPTY_DICT: 0x7d, APPENDS: 0x65, GET: 0x67, BINGET: 0x68, INST: 0x69, LONG_BINGET: 0x6a, LIST: 0x6c, EMPTY_LIST: 0x5d,
  OBJ: 0x6f, PUT: 0x70, BINPUT: 0x71, LONG_BINPUT: 0x72, SETITEM: 0x73, TUPLE: 0x74, EMPTY_TUPLE: 0x29, SETITEMS: 0x75,
  BINFLOAT: 0x47, PROTO: 0x80, NEWOBJ: 0x81, EXT1: 0x82, EXT2: 0x83, EXT4: 0x84, TUPLE1: 0x85, TUPLE2: 0x86, TUPLE3: 0x87,
  NEWTRUE: 0x88, NEWFALSE: 0x89, LONG1: 0x8a, LONG4: 0x8b, BINBYTES: 0x42, SHORT_BINBYTES: 0x43,
  SHORT_BINUNICODE: 0x8c, BINUNICODE8: 0x8d, BINBYTES8: 0x8e, EMPTY_SET: 0x8f, ADDITEMS: 0x90, FROZENSET: 0x91,
  NEWOBJ_EX: 0x92, STACK_GLOBAL: 0x93, MEMOIZE: 0x94, FRAME: 0x95, BYTEARRAY8: 0x96, NEXT_BUFFER: 0x97, READONLY_BUFFER: 0x98,
} as const;

const NAMES = new Map<number, string>(Object.entries(OP).map(([k, v]) => [v, k]));

function opName(op: number): string {
  return `${NAMES.get(op) ?? 'unknown opcode'} (0x${op.toString(16).padStart(2, '0')})`;
}

/** Two's-complement little-endian integer of any length, as LONG1/LONG4 store it. */
function decodeLong(b: Uint8Array): number | bigint {
  if (b.byteLength === 0) return 0;
  let v = 0n;
  for (let i = b.byteLength - 1; i >= 0; i--) v = (v << 8n) | BigInt(b[i]);
  if (b[b.byteLength - 1] & 0x80) v -= 1n << BigInt(8 * b.byteLength);
  return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
}

/** A short description of a value for error messages. */
export function describePyValue(v: unknown): string {
  if (v === null) return 'None';
  if (v instanceof PyFunction) return v.qualifiedName;
  if (v instanceof PyTuple) return `tuple of ${v.items.length}`;
  if (v instanceof Map) return `dict of ${v.size}`;
  if (Array.isArray(v)) return `list of ${v.length}`;
  if (v instanceof Uint8Array) return `bytes of ${v.byteLength}`;
  if (typeof v === 'object') {
    const q = (v as { qualifiedName?: unknown }).qualifiedName;
    return typeof q === 'string' ? q : ((v as { constructor?: { name?: string } }).constructor?.name ?? 'object');
  }
  return `${typeof v} ${String(v)}`;
}

/**
 * Runs one pickle from `input` up to its STOP and returns the object it builds. `file` and `what`
 * name the source in error messages (e.g. the checkpoint and 'data.pkl').
 */
export function unpickle(input: PickleInput, policy: UnpicklePolicy, file: string, what: string): unknown {
  // A MARK starts a new stack; the one it interrupted waits on the metastack (as pickle.py does).
  let stack: unknown[] = [];
  const metastack: unknown[][] = [];
  const memo = new Map<number, unknown>();
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  let opAt = input.position;
  let op = 0;
  const fail: (msg: string) => never = (msg) => {
    throw new InputError(`${what}: ${msg} (at byte ${opAt}, ${opName(op)})`, { file });
  };
  const pop = (): unknown => {
    if (stack.length === 0) fail('stack underflow');
    return stack.pop();
  };
  const top = (): unknown => {
    if (stack.length === 0) fail('stack underflow');
    return stack[stack.length - 1];
  };
  const popMark = (): unknown[] => {
    const items = stack;
    if (metastack.length === 0) fail('no MARK to pop to');
    stack = metastack.pop()!;
    return items;
  };
  const take = (n: number): Uint8Array => {
    if (!Number.isSafeInteger(n) || n < 0 || n > input.remaining) fail(`length ${n} runs past the end of the input (${input.remaining} bytes left)`);
    return input.read(n);
  };
  const u32 = () => {
    const b = take(4);
    return (b[0] | (b[1] << 8) | (b[2] << 16) | (b[3] << 24)) >>> 0;
  };
  const u64 = () => {
    const b = take(8);
    const v = new DataView(b.buffer, b.byteOffset, 8).getBigUint64(0, true);
    return v > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER + 1 : Number(v);
  };
  const text = (b: Uint8Array): string => {
    try {
      return utf8.decode(b);
    } catch {
      return fail('string is not valid UTF-8');
    }
  };
  const line = (): string => {
    const bytes: number[] = [];
    for (;;) {
      if (input.remaining === 0) fail('line without a newline');
      const c = input.readByte();
      if (c === 0x0a) break;
      bytes.push(c);
      if (bytes.length > 4096) fail('line longer than 4096 bytes');
    }
    return text(Uint8Array.from(bytes));
  };
  const memoKey = (k: number) => {
    if (!memo.has(k)) fail(`memo entry ${k} was never stored`);
    return memo.get(k);
  };
  const resolve = (module: string, name: string) => policy.resolveGlobal(module, name);
  const setItems = (target: unknown, items: unknown[]) => {
    if (!(target instanceof Map)) fail(`SETITEM(S) on ${describePyValue(target)}, not a dict`);
    if (items.length % 2) fail('SETITEMS with an odd number of items');
    for (let i = 0; i < items.length; i += 2) (target as Map<unknown, unknown>).set(items[i], items[i + 1]);
  };

  for (;;) {
    opAt = input.position;
    if (input.remaining === 0) {
      op = 0;
      fail('the pickle ends without STOP (truncated)');
    }
    op = input.readByte();
    switch (op) {
      case OP.PROTO: {
        const v = take(1)[0];
        if (v > 5) fail(`pickle protocol ${v} is newer than 5`);
        break;
      }
      case OP.FRAME:
        u64(); // a buffering hint; the frame's opcodes follow inline
        break;
      case OP.STOP:
        return pop(); // the top value, as pickle.py's load_stop takes it
      case OP.MARK:
        metastack.push(stack);
        stack = [];
        break;
      case OP.POP:
        // As pickle.py: the top value, or the mark itself when nothing was pushed after it.
        if (stack.length > 0) stack.pop();
        else popMark();
        break;
      case OP.POP_MARK:
        popMark();
        break;
      case OP.DUP:
        stack.push(top());
        break;
      case OP.NONE:
        stack.push(null);
        break;
      case OP.NEWTRUE:
        stack.push(true);
        break;
      case OP.NEWFALSE:
        stack.push(false);
        break;
      case OP.BININT: {
        const b = take(4);
        stack.push(b[0] | (b[1] << 8) | (b[2] << 16) | (b[3] << 24));
        break;
      }
      case OP.BININT1:
        stack.push(take(1)[0]);
        break;
      case OP.BININT2: {
        const b = take(2);
        stack.push(b[0] | (b[1] << 8));
        break;
      }
      case OP.LONG1:
        stack.push(decodeLong(take(take(1)[0])));
        break;
      case OP.LONG4: {
        const n = u32();
        if (n > 1 << 20) fail(`LONG4 of ${n} bytes`);
        stack.push(decodeLong(take(n)));
        break;
      }
      case OP.BINFLOAT: {
        const b = take(8);
        stack.push(new DataView(b.buffer, b.byteOffset, 8).getFloat64(0, false)); // big-endian
        break;
      }
      case OP.BINUNICODE:
        stack.push(text(take(u32())));
        break;
      case OP.SHORT_BINUNICODE:
        stack.push(text(take(take(1)[0])));
        break;
      case OP.BINUNICODE8:
        stack.push(text(take(u64())));
        break;
      case OP.BINSTRING: {
        // Python 2 str; torch.load decodes them as UTF-8 (its default `encoding`).
        const b = take(4);
        const n = b[0] | (b[1] << 8) | (b[2] << 16) | (b[3] << 24);
        stack.push(text(take(n)));
        break;
      }
      case OP.SHORT_BINSTRING:
        stack.push(text(take(take(1)[0])));
        break;
      case OP.BINBYTES:
        stack.push(Uint8Array.from(take(u32())));
        break;
      case OP.SHORT_BINBYTES:
        stack.push(Uint8Array.from(take(take(1)[0])));
        break;
      case OP.BINBYTES8:
      case OP.BYTEARRAY8:
        stack.push(Uint8Array.from(take(u64())));
        break;
      case OP.EMPTY_TUPLE:
        stack.push(new PyTuple([]));
        break;
      case OP.TUPLE: {
        // popMark replaces `stack`: take the items before naming the stack to push on.
        const items = popMark();
        stack.push(new PyTuple(items));
        break;
      }
      case OP.TUPLE1: {
        const a = pop();
        stack.push(new PyTuple([a]));
        break;
      }
      case OP.TUPLE2: {
        const b = pop();
        const a = pop();
        stack.push(new PyTuple([a, b]));
        break;
      }
      case OP.TUPLE3: {
        const c = pop();
        const b = pop();
        const a = pop();
        stack.push(new PyTuple([a, b, c]));
        break;
      }
      case OP.EMPTY_LIST:
        stack.push([]);
        break;
      case OP.LIST: {
        const items = popMark();
        stack.push(items);
        break;
      }
      case OP.APPEND: {
        const v = pop();
        const l = top();
        if (!Array.isArray(l)) fail(`APPEND to ${describePyValue(l)}, not a list`);
        (l as unknown[]).push(v);
        break;
      }
      case OP.APPENDS: {
        const items = popMark();
        const l = top();
        if (!Array.isArray(l)) fail(`APPENDS to ${describePyValue(l)}, not a list`);
        (l as unknown[]).push(...items);
        break;
      }
      case OP.EMPTY_DICT:
        stack.push(new Map());
        break;
      case OP.DICT: {
        const d = new Map();
        setItems(d, popMark());
        stack.push(d);
        break;
      }
      case OP.SETITEM: {
        const v = pop();
        const k = pop();
        setItems(top(), [k, v]);
        break;
      }
      case OP.SETITEMS: {
        const items = popMark();
        setItems(top(), items);
        break;
      }
      case OP.EMPTY_SET:
        stack.push(new Set());
        break;
      case OP.ADDITEMS: {
        const items = popMark();
        const s = top();
        if (!(s instanceof Set)) fail(`ADDITEMS to ${describePyValue(s)}, not a set`);
        for (const i of items) (s as Set<unknown>).add(i);
        break;
      }
      case OP.FROZENSET: {
        const items = popMark();
        stack.push(new Set(items));
        break;
      }
      case OP.BINPUT:
        memo.set(take(1)[0], top());
        break;
      case OP.LONG_BINPUT:
        memo.set(u32(), top());
        break;
      case OP.MEMOIZE:
        memo.set(memo.size, top());
        break;
      case OP.BINGET:
        stack.push(memoKey(take(1)[0]));
        break;
      case OP.LONG_BINGET:
        stack.push(memoKey(u32()));
        break;
      case OP.GLOBAL: {
        const module = line();
        const name = line();
        stack.push(resolve(module, name));
        break;
      }
      case OP.STACK_GLOBAL: {
        const name = pop();
        const module = pop();
        if (typeof module !== 'string' || typeof name !== 'string') fail('STACK_GLOBAL needs two strings');
        stack.push(resolve(module as string, name as string));
        break;
      }
      case OP.REDUCE: {
        const args = pop();
        const fn = pop();
        if (!(fn instanceof PyFunction)) fail(`REDUCE calls ${describePyValue(fn)}, which this reader never calls`);
        if (!(args instanceof PyTuple)) fail(`REDUCE of ${(fn as PyFunction).qualifiedName} with ${describePyValue(args)} instead of an argument tuple`);
        try {
          stack.push((fn as PyFunction).call((args as PyTuple).items));
        } catch (e) {
          if (e instanceof InputError) throw e;
          fail(`${(fn as PyFunction).qualifiedName}: ${(e as Error).message}`);
        }
        break;
      }
      case OP.BUILD: {
        const state = pop();
        const target = top();
        // A state dict (OrderedDict) pickles its attributes (`_metadata`: per-module versions)
        // as BUILD state; tensors do not need them, so they are dropped. Nothing else is built.
        if (!(target instanceof Map) || !(state instanceof Map || state === null)) {
          fail(`BUILD of ${describePyValue(target)} with ${describePyValue(state)}: only a dict's attributes are accepted`);
        }
        break;
      }
      case OP.BINPERSID:
        stack.push(policy.persistentLoad(pop()));
        break;
      case OP.INST:
      case OP.OBJ:
      case OP.NEWOBJ:
      case OP.NEWOBJ_EX: {
        // These create instances of classes without REDUCE; name the class when it is known.
        let cls = '';
        if (op === OP.INST) cls = `${line()}.${line()}`;
        else {
          const c = op === OP.OBJ ? undefined : stack[stack.length - (op === OP.NEWOBJ ? 2 : 3)];
          cls = c instanceof PyFunction ? c.qualifiedName : describePyValue(c);
        }
        fail(`refused: the pickle instantiates ${cls || 'a class'} directly; a checkpoint of tensors never needs this`);
        break;
      }
      case OP.EXT1:
      case OP.EXT2:
      case OP.EXT4:
        fail('refused: extension-registry globals (copyreg) are not resolved');
        break;
      case OP.NEXT_BUFFER:
      case OP.READONLY_BUFFER:
        fail('refused: out-of-band buffers are not part of a saved checkpoint');
        break;
      default:
        fail(
          NAMES.has(op)
            ? 'this text-protocol (protocol 0/1) opcode is not supported; torch.save writes protocol 2'
            : 'not a pickle opcode (the data is corrupt or not a pickle)',
        );
    }
  }
}
