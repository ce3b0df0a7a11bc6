/**
 * A bad setting in a notebook reads as one line, as on the command line. tslab prints a cell's
 * error with `console.error(e)` (util.inspect: the stack, then own fields such as `{ file: undefined,
 * line: undefined }`), and the headless runner records the same inspect text as the traceback; for
 * errors about the researcher's input (InputError, UnknownNameError) or a missing capability
 * (UnavailableError) the stack is the library's, not theirs, so those print as `Name: message`.
 * Other errors (bugs) keep their stack.
 */
import { inspect } from 'node:util';
import { InputError, UnavailableError } from '../util/errors.js';

/** Makes InputError and UnavailableError (and their subclasses) inspect as `Name: message`. Idempotent. */
export function readableErrors(): void {
  for (const proto of [InputError.prototype, UnavailableError.prototype]) {
    Object.defineProperty(proto, inspect.custom, {
      configurable: true,
      writable: true,
      value(this: Error) {
        return `${this.name}: ${this.message}`;
      },
    });
  }
}
