/**
 * Chat templates: the Jinja template a tokenizer_config.json carries under `chat_template`, rendered
 * as transformers' `apply_chat_template` renders it (jinja2 with trim_blocks and lstrip_blocks, the
 * messages, `add_generation_prompt`, the special tokens' texts and `raise_exception`).
 *
 * This is a small Jinja interpreter for the subset chat templates use, not a general Jinja:
 * - tags `{{ … }}`, `{% … %}`, `{# … #}` with `-` whitespace control, trim_blocks (the newline
 *   after a block tag is dropped), lstrip_blocks (spaces and tabs before a block tag that starts
 *   its line are dropped; `{%+` keeps them) and the template's final newline dropped;
 * - statements `if`/`elif`/`else`/`endif`, `for x in …` / `for a, b in …` (with `loop.index`,
 *   `index0`, `first`, `last`, `length`, `revindex`, `revindex0`; `else` when empty) / `endfor`,
 *   `set x = …` and `set ns.attr = …` (a `namespace()`); a `set` inside a loop stays in the loop,
 *   as in Jinja;
 * - expressions: string, number, true/false/none literals, lists and dicts; `.attr`, `[key]`,
 *   slices `[a:b:c]`; `not and or`, `== != < > <= >=`, `in` / `not in`, `+ - * / // %`, `~`,
 *   `x if c else y`; tests `is [not] defined / undefined / none / string / number / mapping /
 *   iterable / sequence / boolean / true / false / odd / even`;
 * - filters `trim length count upper lower capitalize title first last join default d string
 *   int float list reverse replace tojson items`; string methods `strip lstrip rstrip upper lower
 *   title capitalize startswith endswith split replace`; dict methods `items keys values get`;
 *   globals `raise_exception`, `range`, `namespace`.
 * Anything else (macros, call blocks, includes, other filters) is an error naming it and the line.
 *
 * Why not @huggingface/jinja (checked with 0.5.11, test/chat-template.test.ts): it renders the real
 * templates (LLaMA-2-chat, Zephyr) identically, but prints booleans as true/false and none as
 * nothing where jinja2 prints True/False/None, throws on `~ none`, has no `{%+`, and keeps its own
 * raise_exception (a plain Error), so its output is not what transformers' apply_chat_template
 * gives for every template this interpreter handles.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { InputError } from '../../util/errors.js';
import type { TextTokenizer } from '../types.js';

export interface ChatMessage {
  role: string;
  content: string;
  [key: string]: unknown;
}

type Value = unknown;

class TemplateError extends Error {
  constructor(
    message: string,
    readonly line: number,
  ) {
    super(message);
  }
}

/** raise_exception(...) in a template: the template's own refusal (e.g. roles not alternating). */
export class ChatTemplateException extends Error {}

// ---- lexing -------------------------------------------------------------------------------------

type Chunk = { kind: 'text'; text: string; line: number } | { kind: 'output' | 'block'; src: string; line: number };

function lex(source: string): Chunk[] {
  // Jinja drops one newline at the very end of a template (keep_trailing_newline=False).
  const template = source.replace(/(\r\n|\r|\n)$/, '');
  const chunks: Chunk[] = [];
  const re = /\{\{|\{%|\{#/g;
  let pos = 0;
  let line = 1;
  /** How the previous tag ended: '-' (strip all whitespace), a block or comment tag (trim_blocks), or a variable tag. */
  let previous: 'start' | 'minus' | 'block' | 'output' = 'start';
  /**
   * The text before a tag (or the template's end), with Jinja's whitespace rules applied. Jinja
   * strips a block tag's indentation (lstrip_blocks) only when the tag starts its line: the text
   * holds a newline, or the previous tag's match ended with one.
   */
  const pushText = (text: string, nextTag: '{{' | '{%' | '{#' | undefined, leftMinus: boolean, plus: boolean) => {
    let t = text;
    let lineStarting = previous === 'start';
    if (previous === 'minus') {
      const ws = /^\s*/.exec(t)![0];
      lineStarting = ws.endsWith('\n');
      t = t.slice(ws.length);
    } else if (previous === 'block') {
      const nl = /^\r?\n/.exec(t);
      lineStarting = nl !== null;
      if (nl) t = t.slice(nl[0].length);
    }
    if (leftMinus) t = t.replace(/\s+$/, '');
    else if (nextTag !== undefined && nextTag !== '{{' && !plus) {
      const l = t.lastIndexOf('\n') + 1;
      if ((l > 0 || lineStarting) && /^[ \t\r\f\v]+$/.test(t.slice(l))) t = t.slice(0, l);
    }
    if (t.length > 0) chunks.push({ kind: 'text', text: t, line });
  };
  for (;;) {
    re.lastIndex = pos;
    const m = re.exec(template);
    if (!m) {
      pushText(template.slice(pos), undefined, false, false);
      break;
    }
    const open = m[0] as '{{' | '{%' | '{#';
    const close = open === '{{' ? '}}' : open === '{%' ? '%}' : '#}';
    let inner = m.index + 2;
    const leftMinus = template[inner] === '-';
    const plus = template[inner] === '+';
    if (leftMinus || plus) inner++;
    pushText(template.slice(pos, m.index), open, leftMinus, plus);
    line += (template.slice(pos, m.index).match(/\n/g) ?? []).length;
    const end = findClose(template, inner, close, open === '{#');
    if (end < 0) throw new TemplateError(`unclosed '${open}' (expected '${close}')`, line);
    const rightMinus = end - 1 >= inner && template[end - 1] === '-';
    const src = template.slice(inner, rightMinus ? end - 1 : end);
    if (open !== '{#') chunks.push({ kind: open === '{{' ? 'output' : 'block', src: src.trim(), line });
    line += (template.slice(m.index, end + 2).match(/\n/g) ?? []).length;
    previous = rightMinus ? 'minus' : open === '{{' ? 'output' : 'block';
    pos = end + 2;
  }
  return chunks;
}

/** Index of the closing delimiter, skipping string literals inside expressions. */
function findClose(s: string, from: number, close: string, comment: boolean): number {
  if (comment) return s.indexOf(close, from);
  let quote: string | null = null;
  for (let i = from; i < s.length; i++) {
    const c = s[i];
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = null;
    } else if (c === '"' || c === "'") quote = c;
    else if (s.startsWith(close, i)) return i;
  }
  return -1;
}

// ---- expressions --------------------------------------------------------------------------------

type Tok = { t: 'name' | 'str' | 'num' | 'op'; v: string };

function tokenize(src: string, line: number): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    if (/\s/.test(c)) {
      i++;
    } else if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(i))!;
      out.push({ t: 'name', v: m[0] });
      i += m[0].length;
    } else if (/[0-9]/.test(c)) {
      const m = /^[0-9]+(\.[0-9]+)?/.exec(src.slice(i))!;
      out.push({ t: 'num', v: m[0] });
      i += m[0].length;
    } else if (c === '"' || c === "'") {
      let j = i + 1;
      let s = '';
      while (j < src.length && src[j] !== c) {
        if (src[j] === '\\' && j + 1 < src.length) {
          const e = src[j + 1];
          s += e === 'n' ? '\n' : e === 't' ? '\t' : e === 'r' ? '\r' : e;
          j += 2;
        } else s += src[j++];
      }
      if (j >= src.length) throw new TemplateError(`unterminated string in ${JSON.stringify(src)}`, line);
      out.push({ t: 'str', v: s });
      i = j + 1;
    } else {
      const op = ['//', '==', '!=', '<=', '>=', '**'].find((o) => src.startsWith(o, i)) ?? c;
      if (!'+-*/%~<>=()[]{}.,:|!'.includes(op[0])) throw new TemplateError(`unexpected character '${c}' in ${JSON.stringify(src)}`, line);
      out.push({ t: 'op', v: op });
      i += op.length;
    }
  }
  return out;
}

type Expr = (scope: Scope) => Value;

class Scope {
  private readonly vars = new Map<string, Value>();
  constructor(private readonly parent?: Scope) {}
  get(name: string): Value {
    if (this.vars.has(name)) return this.vars.get(name);
    return this.parent ? this.parent.get(name) : undefined;
  }
  has(name: string): boolean {
    return this.vars.has(name) || (this.parent?.has(name) ?? false);
  }
  set(name: string, v: Value): void {
    this.vars.set(name, v);
  }
}

class Namespace {
  constructor(readonly attrs: Record<string, Value>) {}
}

function truthy(v: Value): boolean {
  if (v === undefined || v === null || v === false || v === 0 || v === '') return false;
  if (Array.isArray(v)) return v.length > 0;
  if (v instanceof Namespace) return true;
  if (typeof v === 'object') return Object.keys(v as object).length > 0;
  return true;
}

/** Python's str() of a value, as Jinja prints it. */
function str(v: Value): string {
  if (v === undefined) return '';
  if (v === null) return 'None';
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return String(v);
  if (Array.isArray(v)) return `[${v.map(repr).join(', ')}]`;
  if (typeof v === 'object') return `{${Object.entries(v as object).map(([k, x]) => `${repr(k)}: ${repr(x)}`).join(', ')}}`;
  return String(v);
}

function repr(v: Value): string {
  return typeof v === 'string' ? `'${v.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'` : str(v);
}

function equal(a: Value, b: Value): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined) return false;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => equal(x, b[i]));
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    const ka = Object.keys(a as object);
    return ka.length === Object.keys(b as object).length && ka.every((k) => equal((a as Record<string, Value>)[k], (b as Record<string, Value>)[k]));
  }
  return false;
}

function contains(container: Value, item: Value): boolean {
  if (typeof container === 'string') return typeof item === 'string' && container.includes(item);
  if (Array.isArray(container)) return container.some((x) => equal(x, item));
  if (container && typeof container === 'object') return typeof item === 'string' && Object.hasOwn(container, item);
  return false;
}

function jsonDump(v: Value): string {
  // Python json.dumps spacing (", " and ": "), which transformers' tojson produces.
  if (v === undefined || v === null) return 'null';
  if (Array.isArray(v)) return `[${v.map(jsonDump).join(', ')}]`;
  if (typeof v === 'object') return `{${Object.entries(v as object).map(([k, x]) => `${JSON.stringify(k)}: ${jsonDump(x)}`).join(', ')}}`;
  return JSON.stringify(v);
}

class ExprParser {
  private i = 0;
  constructor(
    private readonly toks: Tok[],
    private readonly line: number,
  ) {}

  private peek(k = 0): Tok | undefined {
    return this.toks[this.i + k];
  }
  private isOp(v: string, k = 0): boolean {
    const t = this.peek(k);
    return t !== undefined && t.t === 'op' && t.v === v;
  }
  private isName(v: string, k = 0): boolean {
    const t = this.peek(k);
    return t !== undefined && t.t === 'name' && t.v === v;
  }
  private expectOp(v: string): void {
    if (!this.isOp(v)) throw this.error(`expected '${v}'`);
    this.i++;
  }
  error(msg: string): TemplateError {
    const t = this.peek();
    return new TemplateError(`${msg}${t ? ` at '${t.v}'` : ' at the end'} in '${this.toks.map((x) => (x.t === 'str' ? JSON.stringify(x.v) : x.v)).join(' ')}'`, this.line);
  }
  done(): boolean {
    return this.i >= this.toks.length;
  }
  name(): string {
    const t = this.peek();
    if (!t || t.t !== 'name') throw this.error('expected a name');
    this.i++;
    return t.v;
  }
  /** Consumes a keyword if it is next. */
  keyword(v: string): boolean {
    if (!this.isName(v)) return false;
    this.i++;
    return true;
  }
  op(v: string): boolean {
    if (!this.isOp(v)) return false;
    this.i++;
    return true;
  }

  expr(): Expr {
    const a = this.or();
    if (this.keyword('if')) {
      const cond = this.or();
      const b = this.keyword('else') ? this.expr() : () => undefined;
      return (s) => (truthy(cond(s)) ? a(s) : b(s));
    }
    return a;
  }
  private or(): Expr {
    let a = this.and();
    while (this.keyword('or')) {
      const l = a;
      const r = this.and();
      a = (s) => (truthy(l(s)) ? l(s) : r(s));
    }
    return a;
  }
  private and(): Expr {
    let a = this.not();
    while (this.keyword('and')) {
      const l = a;
      const r = this.not();
      a = (s) => (truthy(l(s)) ? r(s) : l(s));
    }
    return a;
  }
  private not(): Expr {
    if (this.keyword('not')) {
      const a = this.not();
      return (s) => !truthy(a(s));
    }
    return this.compare();
  }
  private compare(): Expr {
    let a = this.additive();
    for (;;) {
      const l = a;
      if (this.isName('not') && this.isName('in', 1)) {
        this.i += 2;
        const r = this.additive();
        a = (s) => !contains(r(s), l(s));
      } else if (this.keyword('in')) {
        const r = this.additive();
        a = (s) => contains(r(s), l(s));
      } else {
        const op = ['==', '!=', '<', '>', '<=', '>='].find((o) => this.isOp(o));
        if (!op) return a;
        this.i++;
        const r = this.additive();
        a = (s) => {
          const x = l(s) as number;
          const y = r(s) as number;
          switch (op) {
            case '==':
              return equal(x, y);
            case '!=':
              return !equal(x, y);
            case '<':
              return x < y;
            case '>':
              return x > y;
            case '<=':
              return x <= y;
            default:
              return x >= y;
          }
        };
      }
    }
  }
  private additive(): Expr {
    let a = this.concat();
    for (;;) {
      const op = this.isOp('+') ? '+' : this.isOp('-') ? '-' : undefined;
      if (!op) return a;
      this.i++;
      const l = a;
      const r = this.concat();
      const line = this.line;
      a = (s) => {
        const x = l(s);
        const y = r(s);
        if (op === '-') return (x as number) - (y as number);
        if (typeof x === 'number' && typeof y === 'number') return x + y;
        if (typeof x === 'string' && typeof y === 'string') return x + y;
        if (Array.isArray(x) && Array.isArray(y)) return [...x, ...y];
        throw new TemplateError(`cannot add ${repr(x)} and ${repr(y)}`, line);
      };
    }
  }
  private concat(): Expr {
    let a = this.mul();
    while (this.op('~')) {
      const l = a;
      const r = this.mul();
      a = (s) => str(l(s)) + str(r(s));
    }
    return a;
  }
  private mul(): Expr {
    let a = this.unary();
    for (;;) {
      const op = ['*', '//', '/', '%'].find((o) => this.isOp(o));
      if (!op) return a;
      this.i++;
      const l = a;
      const r = this.unary();
      a = (s) => {
        const v = l(s);
        const y = r(s) as number;
        if (op === '*' && typeof v === 'string') return v.repeat(y);
        const x = v as number;
        if (op === '*') return x * y;
        if (op === '/') return x / y;
        if (op === '//') return Math.floor(x / y);
        return ((x % y) + y) % y;
      };
    }
  }
  private unary(): Expr {
    if (this.op('-')) {
      const a = this.unary();
      return (s) => -(a(s) as number);
    }
    if (this.op('+')) return this.unary();
    return this.postfix(this.primary());
  }
  private primary(): Expr {
    const t = this.peek();
    if (!t) throw this.error('expected an expression');
    this.i++;
    if (t.t === 'str') {
      // Adjacent string literals concatenate, as in Python.
      let v = t.v;
      while (this.peek()?.t === 'str') v += this.toks[this.i++].v;
      return () => v;
    }
    if (t.t === 'num') {
      const v = Number(t.v);
      return () => v;
    }
    if (t.t === 'name') {
      if (t.v === 'true' || t.v === 'True') return () => true;
      if (t.v === 'false' || t.v === 'False') return () => false;
      if (t.v === 'none' || t.v === 'None') return () => null;
      const n = t.v;
      return (s) => s.get(n);
    }
    if (t.v === '(') {
      const e = this.expr();
      if (this.op(',')) {
        const items = [e, ...this.list(')')];
        return (s) => items.map((x) => x(s));
      }
      this.expectOp(')');
      return e;
    }
    if (t.v === '[') {
      const items = this.list(']');
      return (s) => items.map((x) => x(s));
    }
    if (t.v === '{') {
      const pairs: Array<[Expr, Expr]> = [];
      while (!this.op('}')) {
        const k = this.expr();
        this.expectOp(':');
        pairs.push([k, this.expr()]);
        if (!this.op(',')) {
          this.expectOp('}');
          break;
        }
      }
      return (s) => Object.fromEntries(pairs.map(([k, v]) => [str(k(s)), v(s)]));
    }
    this.i--;
    throw this.error('unexpected token');
  }
  /** Comma-separated expressions up to `close` (consumed). */
  private list(close: string): Expr[] {
    const items: Expr[] = [];
    while (!this.op(close)) {
      items.push(this.expr());
      if (!this.op(',')) {
        this.expectOp(close);
        break;
      }
    }
    return items;
  }
  /** Call arguments after '(' : positional and keyword (name=value). */
  private args(): { pos: Expr[]; kw: Map<string, Expr> } {
    const pos: Expr[] = [];
    const kw = new Map<string, Expr>();
    while (!this.op(')')) {
      if (this.peek()?.t === 'name' && this.isOp('=', 1)) {
        const k = this.name();
        this.i++;
        kw.set(k, this.expr());
      } else pos.push(this.expr());
      if (!this.op(',')) {
        this.expectOp(')');
        break;
      }
    }
    return { pos, kw };
  }
  private postfix(base: Expr): Expr {
    let a = base;
    const line = this.line;
    for (;;) {
      if (this.op('.')) {
        const attr = this.name();
        const obj = a;
        if (this.op('(')) {
          const { pos } = this.args();
          a = (s) => callMethod(obj(s), attr, pos.map((p) => p(s)), line);
        } else a = (s) => getAttr(obj(s), attr);
      } else if (this.op('[')) {
        const obj = a;
        const parts: Array<Expr | undefined> = [undefined];
        let slice = false;
        while (!this.op(']')) {
          if (this.op(':')) {
            slice = true;
            parts.push(undefined);
          } else parts[parts.length - 1] = this.expr();
        }
        if (slice) {
          a = (s) => sliceOf(obj(s), parts.map((p) => (p ? (p(s) as number) : undefined)), line);
        } else {
          const key = parts[0];
          if (!key) throw this.error('empty subscript');
          a = (s) => getItem(obj(s), key(s));
        }
      } else if (this.op('(')) {
        const fn = a;
        const { pos, kw } = this.args();
        a = (s) => {
          const f = fn(s);
          if (typeof f !== 'function') throw new TemplateError(`${repr(f)} is not callable`, line);
          return (f as (args: Value[], kw: Map<string, Value>) => Value)(
            pos.map((p) => p(s)),
            new Map([...kw].map(([k, v]) => [k, v(s)])),
          );
        };
      } else if (this.op('|')) {
        const filter = this.name();
        const { pos } = this.op('(') ? this.args() : { pos: [] as Expr[] };
        const obj = a;
        a = (s) => applyFilter(filter, obj(s), pos.map((p) => p(s)), line);
      } else if (this.keyword('is')) {
        const negate = this.keyword('not');
        const test = this.name();
        const arg = this.op('(') ? this.args().pos : [];
        const obj = a;
        a = (s) => applyTest(test, obj, s, arg.map((p) => p(s)), line) !== negate;
      } else return a;
    }
  }
}

function getAttr(obj: Value, attr: string): Value {
  if (obj instanceof Namespace) return obj.attrs[attr];
  if (obj && typeof obj === 'object' && !Array.isArray(obj) && Object.hasOwn(obj, attr)) return (obj as Record<string, Value>)[attr];
  return undefined;
}

function getItem(obj: Value, key: Value): Value {
  if (typeof key === 'number' && (Array.isArray(obj) || typeof obj === 'string')) {
    const i = key < 0 ? obj.length + key : key;
    return obj[i];
  }
  return getAttr(obj, str(key));
}

function sliceOf(obj: Value, parts: Array<number | undefined>, line: number): Value {
  if (!Array.isArray(obj) && typeof obj !== 'string') throw new TemplateError(`cannot slice ${repr(obj)}`, line);
  const [start, stop, step = 1] = parts;
  const n = obj.length;
  const norm = (v: number | undefined, d: number) => (v === undefined ? d : v < 0 ? Math.max(n + v, step < 0 ? -1 : 0) : Math.min(v, n));
  const items: Value[] = [];
  const src = Array.from(obj as ArrayLike<Value>);
  if (step > 0) for (let i = norm(start, 0); i < norm(stop, n); i += step) items.push(src[i]);
  else for (let i = start === undefined ? n - 1 : norm(start, n - 1); i > (stop === undefined ? -1 : norm(stop, -1)); i += step) items.push(src[i]);
  return typeof obj === 'string' ? items.join('') : items;
}

function pyStrip(s: string, chars: Value, left: boolean, right: boolean): string {
  const set = typeof chars === 'string' ? chars : ' \t\n\r\f\v';
  let a = 0;
  let b = s.length;
  if (left) while (a < b && set.includes(s[a])) a++;
  if (right) while (b > a && set.includes(s[b - 1])) b--;
  return s.slice(a, b);
}

function callMethod(obj: Value, name: string, args: Value[], line: number): Value {
  if (typeof obj === 'string') {
    switch (name) {
      case 'strip':
        return pyStrip(obj, args[0], true, true);
      case 'lstrip':
        return pyStrip(obj, args[0], true, false);
      case 'rstrip':
        return pyStrip(obj, args[0], false, true);
      case 'upper':
        return obj.toUpperCase();
      case 'lower':
        return obj.toLowerCase();
      case 'title':
        return obj.replace(/\w\S*/g, (w) => w[0].toUpperCase() + w.slice(1).toLowerCase());
      case 'capitalize':
        return obj.length ? obj[0].toUpperCase() + obj.slice(1).toLowerCase() : obj;
      case 'startswith':
        return obj.startsWith(str(args[0]));
      case 'endswith':
        return obj.endsWith(str(args[0]));
      case 'split':
        return args[0] === undefined || args[0] === null ? obj.split(/\s+/).filter((x) => x.length > 0) : obj.split(str(args[0]));
      case 'replace':
        return obj.replaceAll(str(args[0]), str(args[1]));
    }
  } else if (obj && typeof obj === 'object' && !Array.isArray(obj) && !(obj instanceof Namespace)) {
    const o = obj as Record<string, Value>;
    switch (name) {
      case 'items':
        return Object.entries(o);
      case 'keys':
        return Object.keys(o);
      case 'values':
        return Object.values(o);
      case 'get':
        return Object.hasOwn(o, str(args[0])) ? o[str(args[0])] : (args[1] ?? null);
    }
  }
  throw new TemplateError(`unsupported method ${repr(obj)}.${name}()`, line);
}

const FILTERS = ['trim', 'length', 'count', 'upper', 'lower', 'capitalize', 'title', 'first', 'last', 'join', 'default', 'd', 'string', 'int', 'float', 'list', 'reverse', 'replace', 'tojson', 'items'];

function applyFilter(name: string, v: Value, args: Value[], line: number): Value {
  switch (name) {
    case 'trim':
      return pyStrip(str(v), args[0], true, true);
    case 'length':
    case 'count':
      return typeof v === 'string' || Array.isArray(v) ? v.length : v && typeof v === 'object' ? Object.keys(v).length : 0;
    case 'upper':
    case 'lower':
    case 'capitalize':
    case 'title':
      return callMethod(str(v), name, [], line);
    case 'first':
      return Array.isArray(v) || typeof v === 'string' ? v[0] : undefined;
    case 'last':
      return Array.isArray(v) || typeof v === 'string' ? v[v.length - 1] : undefined;
    case 'join':
      return (Array.isArray(v) ? v : []).map(str).join(args[0] === undefined ? '' : str(args[0]));
    case 'default':
    case 'd':
      return v === undefined || (args[1] === true && !truthy(v)) ? args[0] : v;
    case 'string':
      return str(v);
    case 'int':
      return Math.trunc(Number(v)) || 0;
    case 'float':
      return Number(v) || 0;
    case 'list':
      return typeof v === 'string' ? Array.from(v) : Array.isArray(v) ? v : v && typeof v === 'object' ? Object.keys(v) : [];
    case 'reverse':
      return typeof v === 'string' ? Array.from(v).reverse().join('') : Array.isArray(v) ? [...v].reverse() : v;
    case 'replace':
      return str(v).replaceAll(str(args[0]), str(args[1]));
    case 'tojson':
      return jsonDump(v);
    case 'items':
      return v && typeof v === 'object' ? Object.entries(v) : [];
  }
  throw new TemplateError(`unsupported filter '${name}' (supported: ${FILTERS.join(', ')})`, line);
}

function applyTest(name: string, e: Expr, s: Scope, args: Value[], line: number): boolean {
  const v = e(s);
  switch (name) {
    case 'defined':
      return v !== undefined;
    case 'undefined':
      return v === undefined;
    case 'none':
      return v === null;
    case 'string':
      return typeof v === 'string';
    case 'number':
      return typeof v === 'number';
    case 'boolean':
      return typeof v === 'boolean';
    case 'true':
      return v === true;
    case 'false':
      return v === false;
    case 'mapping':
      return v !== null && typeof v === 'object' && !Array.isArray(v);
    case 'iterable':
    case 'sequence':
      return typeof v === 'string' || Array.isArray(v) || (v !== null && typeof v === 'object');
    case 'odd':
      return (v as number) % 2 === 1;
    case 'even':
      return (v as number) % 2 === 0;
    case 'eq':
    case 'equalto':
      return equal(v, args[0]);
  }
  throw new TemplateError(`unsupported test 'is ${name}'`, line);
}

// ---- statements ---------------------------------------------------------------------------------

type Node =
  | { kind: 'text'; text: string }
  | { kind: 'output'; expr: Expr }
  | { kind: 'if'; branches: Array<{ cond: Expr | undefined; body: Node[] }> }
  | { kind: 'for'; vars: string[]; iter: Expr; body: Node[]; orElse: Node[]; line: number }
  | { kind: 'set'; target: string; attr?: string; value: Expr; line: number };

function parse(chunks: Chunk[]): Node[] {
  let i = 0;
  const exprOf = (src: string, line: number): [ExprParser, Expr] => {
    const p = new ExprParser(tokenize(src, line), line);
    return [p, p.expr()];
  };
  const whole = (src: string, line: number): Expr => {
    const [p, e] = exprOf(src, line);
    if (!p.done()) throw p.error('unexpected tokens after the expression');
    return e;
  };
  /** Parses nodes until one of `ends` (a block keyword); returns the nodes and the ending keyword's chunk. */
  const body = (ends: string[]): [Node[], { word: string; rest: string; line: number } | undefined] => {
    const nodes: Node[] = [];
    while (i < chunks.length) {
      const c = chunks[i++];
      if (c.kind === 'text') nodes.push({ kind: 'text', text: c.text });
      else if (c.kind === 'output') nodes.push({ kind: 'output', expr: whole(c.src, c.line) });
      else {
        const word = /^\w+/.exec(c.src)?.[0] ?? '';
        const rest = c.src.slice(word.length).trim();
        if (ends.includes(word)) return [nodes, { word, rest, line: c.line }];
        if (word === 'if') {
          const branches: Array<{ cond: Expr | undefined; body: Node[] }> = [];
          let cond: Expr | undefined = whole(rest, c.line);
          for (;;) {
            const [b, end] = body(['elif', 'else', 'endif']);
            branches.push({ cond, body: b });
            if (!end) throw new TemplateError(`'if' without 'endif'`, c.line);
            if (end.word === 'endif') break;
            cond = end.word === 'elif' ? whole(end.rest, end.line) : undefined;
          }
          nodes.push({ kind: 'if', branches });
        } else if (word === 'for') {
          const m = /^([\w\s,]+?)\s+in\s+([\s\S]+)$/.exec(rest);
          if (!m) throw new TemplateError(`expected 'for x in …', found 'for ${rest}'`, c.line);
          const vars = m[1].split(',').map((v) => v.trim());
          const [b, end] = body(['else', 'endfor']);
          if (!end) throw new TemplateError(`'for' without 'endfor'`, c.line);
          let orElse: Node[] = [];
          if (end.word === 'else') {
            const [e, end2] = body(['endfor']);
            if (!end2) throw new TemplateError(`'for' without 'endfor'`, c.line);
            orElse = e;
          }
          nodes.push({ kind: 'for', vars, iter: whole(m[2], c.line), body: b, orElse, line: c.line });
        } else if (word === 'set') {
          const m = /^(\w+)(?:\.(\w+))?\s*=\s*([\s\S]+)$/.exec(rest);
          if (!m) throw new TemplateError(`expected 'set name = …', found 'set ${rest}'`, c.line);
          nodes.push({ kind: 'set', target: m[1], attr: m[2], value: whole(m[3], c.line), line: c.line });
        } else {
          throw new TemplateError(`unsupported statement '{% ${word} %}' (supported: if, for, set)`, c.line);
        }
      }
    }
    return [nodes, undefined];
  };
  const [nodes, end] = body([]);
  if (end) throw new TemplateError(`unexpected '{% ${end.word} %}'`, end.line);
  return nodes;
}

function iterate(v: Value, line: number): Value[] {
  if (Array.isArray(v)) return v;
  if (typeof v === 'string') return Array.from(v);
  if (v && typeof v === 'object') return Object.keys(v);
  if (v === undefined || v === null) return [];
  throw new TemplateError(`cannot iterate over ${repr(v)}`, line);
}

function run(nodes: Node[], scope: Scope, out: string[]): void {
  for (const n of nodes) {
    switch (n.kind) {
      case 'text':
        out.push(n.text);
        break;
      case 'output':
        out.push(str(n.expr(scope)));
        break;
      case 'if': {
        const b = n.branches.find((x) => x.cond === undefined || truthy(x.cond(scope)));
        if (b) run(b.body, scope, out);
        break;
      }
      case 'for': {
        const items = iterate(n.iter(scope), n.line);
        if (items.length === 0) run(n.orElse, scope, out);
        items.forEach((item, k) => {
          const inner = new Scope(scope);
          if (n.vars.length === 1) inner.set(n.vars[0], item);
          else {
            if (!Array.isArray(item) || item.length !== n.vars.length) throw new TemplateError(`cannot unpack ${repr(item)} into ${n.vars.join(', ')}`, n.line);
            n.vars.forEach((v, j) => inner.set(v, item[j]));
          }
          const len = items.length;
          inner.set('loop', { index: k + 1, index0: k, first: k === 0, last: k === len - 1, length: len, revindex: len - k, revindex0: len - k - 1 });
          run(n.body, inner, out);
        });
        break;
      }
      case 'set': {
        const v = n.value(scope);
        if (n.attr === undefined) scope.set(n.target, v);
        else {
          const ns = scope.get(n.target);
          if (!(ns instanceof Namespace)) throw new TemplateError(`'set ${n.target}.${n.attr}' needs ${n.target} to be a namespace()`, n.line);
          ns.attrs[n.attr] = v;
        }
        break;
      }
    }
  }
}

/** A compiled chat template. */
export class ChatTemplate {
  private readonly nodes: Node[];

  constructor(
    readonly source: string,
    /** Where the template came from, for error messages. */
    readonly file = 'chat template',
  ) {
    try {
      this.nodes = parse(lex(source));
    } catch (e) {
      if (e instanceof TemplateError) throw new InputError(`chat template: ${e.message}`, { file, line: e.line });
      throw e;
    }
  }

  /** Renders the template with `messages`, `add_generation_prompt` and any other variables (bos_token, eos_token, …). */
  render(vars: Record<string, Value>): string {
    const globals = new Scope();
    globals.set('raise_exception', (args: Value[]) => {
      throw new ChatTemplateException(str(args[0]));
    });
    globals.set('range', (args: Value[]) => {
      const [a, b, step = 1] = args.length === 1 ? [0, args[0] as number] : (args as number[]);
      const out: number[] = [];
      for (let i = a as number; step > 0 ? i < (b as number) : i > (b as number); i += step as number) out.push(i);
      return out;
    });
    globals.set('namespace', (_: Value[], kw: Map<string, Value>) => new Namespace(Object.fromEntries(kw)));
    const scope = new Scope(globals);
    for (const [k, v] of Object.entries(vars)) scope.set(k, v);
    const out: string[] = [];
    try {
      run(this.nodes, scope, out);
    } catch (e) {
      if (e instanceof TemplateError) throw new InputError(`chat template: ${e.message}`, { file: this.file, line: e.line });
      throw e;
    }
    return out.join('');
  }
}

function tokenText(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (v && typeof v === 'object' && typeof (v as { content?: unknown }).content === 'string') return (v as { content: string }).content;
  return undefined;
}

/**
 * The chat template of a tokenizer_config.json (a string, or a list of {name, template} from which
 * `name` — default "default" — is taken), or undefined when it has none.
 */
export function chatTemplateFromTokenizerConfig(config: Record<string, unknown>, file = 'tokenizer_config.json', name = 'default'): ChatTemplate | undefined {
  const t = config.chat_template;
  if (t === undefined || t === null) return undefined;
  if (typeof t === 'string') return new ChatTemplate(t, file);
  if (Array.isArray(t)) {
    const found = t.find((x) => x && typeof x === 'object' && (x as { name?: unknown }).name === name) as { template?: unknown } | undefined;
    if (!found || typeof found.template !== 'string') {
      const names = t.map((x) => String((x as { name?: unknown })?.name));
      throw new InputError(`no chat template named '${name}' (it has ${names.join(', ')})`, { file });
    }
    return new ChatTemplate(found.template, file);
  }
  throw new InputError(`'chat_template' must be a string or a list of {name, template}, found ${JSON.stringify(t).slice(0, 80)}`, { file });
}

/**
 * transformers' apply_chat_template(messages, tokenize=False): the template rendered with the
 * messages, add_generation_prompt and the config's special tokens (bos_token, eos_token, unk_token,
 * pad_token) as text. Tokenise the result without adding special tokens again when the template
 * writes BOS itself (as LLaMA-2's does).
 */
export function applyChatTemplate(
  template: ChatTemplate,
  messages: readonly ChatMessage[],
  opts: { addGenerationPrompt?: boolean; tokenizerConfig?: Record<string, unknown>; variables?: Record<string, unknown> } = {},
): string {
  const special: Record<string, unknown> = {};
  for (const k of ['bos_token', 'eos_token', 'unk_token', 'pad_token']) {
    const v = tokenText(opts.tokenizerConfig?.[k]);
    if (v !== undefined) special[k] = v;
  }
  return template.render({ ...special, ...opts.variables, messages, add_generation_prompt: opts.addGenerationPrompt ?? false });
}

/** A model directory's chat template and tokenizer config (tokenizer_config.json), or undefined without one. */
export function readChatTemplate(dir: string): { template: ChatTemplate; tokenizerConfig: Record<string, unknown> } | undefined {
  const file = join(dir, 'tokenizer_config.json');
  if (!existsSync(file)) return undefined;
  let config: Record<string, unknown>;
  try {
    config = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new InputError(`not valid JSON: ${(e as Error).message}`, { file });
  }
  const template = chatTemplateFromTokenizerConfig(config, file);
  return template ? { template, tokenizerConfig: config } : undefined;
}

/**
 * Token ids of a conversation for generation: the directory's chat template rendered with
 * add_generation_prompt (default true), then tokenised as transformers' apply_chat_template does,
 * with add_special_tokens=False: only the special tokens the template writes (LLaMA-2's writes
 * BOS). The tokenizer's own special tokens are found by encoding the empty text and must be a
 * prefix of every encoding (LLaMA's BOS), so they can be taken off again.
 */
export function chatPromptIds(
  m: { dir: string; tokenizer: TextTokenizer },
  messages: readonly ChatMessage[],
  opts: { addGenerationPrompt?: boolean } = {},
): number[] {
  const chat = readChatTemplate(m.dir);
  if (!chat) throw new InputError('the model has no chat template (tokenizer_config.json chat_template)', { file: m.dir });
  const text = applyChatTemplate(chat.template, messages, { addGenerationPrompt: opts.addGenerationPrompt ?? true, tokenizerConfig: chat.tokenizerConfig });
  const added = m.tokenizer.encode('').ids;
  const ids = m.tokenizer.encode(text).ids;
  if (!added.every((id, i) => ids[i] === id)) {
    throw new InputError(`the tokenizer adds special tokens [${added.join(', ')}] that are not a prefix of its encodings; cannot tokenise a chat without them`, { file: m.dir });
  }
  return ids.slice(added.length);
}
