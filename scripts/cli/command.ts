/**
 * What every command line of the project shares: its options declared once (parsed strictly, and
 * listed by --help with their defaults and where each default comes from), and one error handler
 * with one set of exit codes:
 *
 * | exit | meaning                                                                         |
 * |------|---------------------------------------------------------------------------------|
 * | 0    | done                                                                            |
 * | 1    | the work ran and found a failure (a parity check failed), or an unexpected error (printed with its stack) |
 * | 2    | usage or input error: unknown flag or name, bad value, missing or malformed file (one line) |
 * | 3    | a backend or resource this machine lacks (one line, saying what to install or build) |
 * | 130  | interrupted (Ctrl-C) after writing what could be saved                          |
 *
 * Known errors (lib/util/errors.ts) print one line: `<command>: <what, where, what was expected>`.
 */
import { accessSync, constants, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { InputError, UnavailableError } from '../../lib/util/errors.js';

export const EXIT = { ok: 0, failed: 1, usage: 2, unavailable: 3, interrupted: 130 } as const;

export interface OptionSpec {
  type: 'string' | 'boolean';
  short?: string;
  multiple?: boolean;
  /** The value's placeholder in --help, e.g. '<dir>'. */
  value?: string;
  help: string;
  /** The default as --help shows it, and where it comes from (e.g. "5e-5 (recipe angle-stsb: AnglE train_angle.py)"). */
  default?: string;
}

export type OptionSpecs = Record<string, OptionSpec>;

type Parsed<S extends OptionSpecs> = {
  [K in keyof S]?: S[K]['type'] extends 'boolean' ? boolean : S[K]['multiple'] extends true ? string[] : string;
};

/** Parses argv strictly against `specs` (an unknown flag or a missing value is a usage error). */
export function parseOptions<S extends OptionSpecs>(specs: S, argv: string[], allowPositionals = false): { values: Parsed<S>; positionals: string[] } {
  const options: Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }> = {};
  for (const [name, s] of Object.entries(specs)) options[name] = { type: s.type, ...(s.short ? { short: s.short } : {}), ...(s.multiple ? { multiple: true } : {}) };
  try {
    const r = parseArgs({ args: argv, options, allowPositionals, strict: true });
    return { values: r.values as Parsed<S>, positionals: r.positionals };
  } catch (e) {
    // node's messages end with advice about '--' that does not apply to us; keep the first sentence.
    throw new UsageError((e as Error).message.split('\n')[0].replace(/\. To specify a positional argument.*$/, ''));
  }
}

/** The --help text: a usage line, then every option with its value, meaning and default. */
export function helpText(usage: string, specs: OptionSpecs, footer = ''): string {
  const rows = Object.entries(specs).map(([name, s]) => [`${s.short ? `-${s.short}, ` : ''}--${name}${s.value ? ` ${s.value}` : ''}`, s.help + (s.default !== undefined ? ` [default: ${s.default}]` : '')]);
  const width = Math.max(...rows.map((r) => r[0].length));
  const body = rows.map(([flag, text]) => `  ${flag.padEnd(width)}  ${text}`).join('\n');
  return `${usage}\n\noptions:\n${body}${footer ? `\n\n${footer}` : ''}`;
}

/** What every usage error's line ends with, so a reader knows where the options are listed. */
export const SEE_HELP = '(see --help)';

/**
 * A usage error raised by a command itself (a flag combination, a missing required flag, a bad
 * value or name): exit 2, its line ending with "(see --help)".
 */
export class UsageError extends InputError {
  constructor(message: string) {
    super(message.endsWith(SEE_HELP) ? message : `${message} ${SEE_HELP}`);
    this.name = 'UsageError';
  }
}

/**
 * Runs a command's argument checks (flags, values, names of tasks, presets, notebooks...) and
 * turns an InputError they raise into a UsageError. Commands call it before any build step, model
 * load or other expensive work, so a typo costs a second, not a build; whatever throws inside is an
 * argument problem by construction, which is why the line then points at --help.
 */
export function validateArguments<T>(check: () => T): T {
  try {
    return check();
  } catch (e) {
    if (e instanceof InputError && !(e instanceof UsageError)) throw new UsageError(e.message);
    throw e;
  }
}

/**
 * Runs a command's main function and exits with the code it returns (default 0), or with the code
 * of the error it throws: one line for known errors, the stack for unexpected ones.
 */
export async function runCommand(name: string, main: () => Promise<number | void>): Promise<void> {
  let code: number;
  try {
    code = (await main()) ?? EXIT.ok;
  } catch (e) {
    code = reportError(name, e);
  }
  process.exitCode = code;
}

/** Prints an error the way every command does and returns its exit code. */
export function reportError(name: string, e: unknown): number {
  if (e instanceof UnavailableError) {
    console.error(`${name}: ${e.message}`);
    return EXIT.unavailable;
  }
  if (e instanceof InputError) {
    console.error(`${name}: ${e.message}`);
    return EXIT.usage;
  }
  console.error(`${name}: unexpected error (a bug; please report it with this trace):`);
  console.error(e instanceof Error ? (e.stack ?? e.message) : String(e));
  return EXIT.failed;
}

/**
 * Fails now, naming the folder and the real cause, if a file cannot be created in `dir` (created
 * when missing): commands call it before expensive work, so a read-only results folder is found in
 * a second, not after an hour of training. `hint` says how to choose another folder.
 */
export function checkWritableDir(dir: string, what: string, hint: string): void {
  try {
    mkdirSync(dir, { recursive: true });
    accessSync(dir, constants.W_OK);
    const probe = join(dir, `.write-test-${process.pid}`);
    writeFileSync(probe, '');
    rmSync(probe);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const readOnly = code === 'EACCES' || code === 'EROFS' || code === 'EPERM';
    throw new InputError(`cannot write the ${what} here (${code ?? (e as Error).message}${readOnly ? ': the folder is read-only for this user' : ''}); ${hint}`, { file: dir });
  }
}
