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
