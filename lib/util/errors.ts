/**
 * Errors about bad input (files, arguments, data) carry where the problem is, so a researcher
 * can fix the file instead of reading a stack trace.
 */
export interface InputLocation {
  /** The file (or URL) the bad input came from. */
  file?: string;
  /** 1-based line number inside `file`, when the input is line-oriented. */
  line?: number;
}

export class InputError extends Error {
  readonly file?: string;
  readonly line?: number;

  constructor(message: string, where: InputLocation = {}) {
    const prefix = where.file ? `${where.file}${where.line !== undefined ? `:${where.line}` : ''}: ` : '';
    super(prefix + message);
    this.name = 'InputError';
    this.file = where.file;
    this.line = where.line;
  }
}

/** A requested capability (backend, model file, network) is not available on this machine. */
export class UnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnavailableError';
  }
}

/**
 * A name that is not one of the known ones (pooling, task, backend, objective, preset, dataset,
 * schedule, architecture, ...). One class for all of them, so every such error reads the same and
 * lists what would have been accepted.
 */
export class UnknownNameError extends InputError {
  constructor(
    /** What kind of name, e.g. 'pooling' or 'task'. */
    readonly kind: string,
    /** The name that was given. */
    readonly given: string,
    /** The names that are accepted. */
    readonly valid: readonly string[],
    where: InputLocation = {},
  ) {
    super(`unknown ${kind} '${given}': expected one of ${valid.join(', ')}`, where);
    this.name = 'UnknownNameError';
  }
}
