/**
 * npm run portable-records [-- --results <dir>] [--check]
 *
 * Rewrites run records (results/<experiment>/<run-id>.json) so that they carry no path of the
 * machine that made them: every string value that is an absolute path becomes its portable form
 * (lib/report/training-record.ts portablePath: `shared:…`, `project:…` or `local:<last two parts>`).
 * Every number of a record is compared before and after, and a record is written (atomically) only
 * when they are identical. `--check` changes nothing and exits 1 when a record still holds a path.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { resolveResultsDir } from '../lib/config.js';
import { portablePath } from '../lib/report/training-record.js';
import { writeFileAtomicSync } from '../lib/util/atomic-write.js';
import { InputError } from '../lib/util/errors.js';
import { EXIT, helpText, parseOptions, runCommand, type OptionSpecs } from './cli/command.js';

const OPTIONS = {
  results: { type: 'string', value: '<dir>', help: 'the results folder', default: 'ANGLE_RESULTS_DIR, else results/' },
  check: { type: 'boolean', help: 'only report records that hold an absolute path (exit 1 if any)' },
  help: { type: 'boolean', short: 'h', help: 'this text' },
} satisfies OptionSpecs;

/** Whether a string is an absolute path of this kind of machine (not a URL or an id). */
function looksLikePath(s: string): boolean {
  return isAbsolute(s) && /^\/(?:[^/\s]+\/)*[^/\s]*$/.test(s) && s.length > 1;
}

function portable(value: unknown, changed: string[], where = ''): unknown {
  if (typeof value === 'string') {
    if (!looksLikePath(value)) return value;
    const p = portablePath(value);
    changed.push(`${where}: ${value} -> ${p}`);
    return p;
  }
  if (Array.isArray(value)) return value.map((v, i) => portable(v, changed, `${where}[${i}]`));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, portable(v, changed, where ? `${where}.${k}` : k)]));
  return value;
}

function numbers(value: unknown, out: number[] = []): number[] {
  if (typeof value === 'number') out.push(value);
  else if (Array.isArray(value)) value.forEach((v) => numbers(v, out));
  else if (value && typeof value === 'object') Object.values(value).forEach((v) => numbers(v, out));
  return out;
}

function recordFiles(root: string): string[] {
  return readdirSync(root)
    .map((e) => join(root, e))
    .filter((d) => statSync(d).isDirectory())
    .flatMap((d) => readdirSync(d).filter((f) => f.endsWith('.json') && !f.endsWith('.predictions.json')).map((f) => join(d, f)));
}

async function main(): Promise<number> {
  const { values } = parseOptions(OPTIONS, process.argv.slice(2));
  if (values.help) {
    console.log(helpText('usage: npm run portable-records -- [--results <dir>] [--check]', OPTIONS));
    return EXIT.ok;
  }
  const root = resolveResultsDir(values.results);
  let withPaths = 0;
  const files = recordFiles(root);
  for (const file of files) {
    let record: unknown;
    try {
      record = JSON.parse(readFileSync(file, 'utf8'));
    } catch (e) {
      throw new InputError(`not a JSON run record: ${(e as Error).message}`, { file });
    }
    const changed: string[] = [];
    const rewritten = portable(record, changed);
    if (changed.length === 0) continue;
    withPaths++;
    for (const c of changed) console.log(`${file}: ${c}`);
    if (values.check) continue;
    const before = numbers(record);
    const after = numbers(rewritten);
    if (before.length !== after.length || before.some((x, i) => !Object.is(x, after[i]))) throw new Error(`${file}: a number would change; not written`);
    writeFileAtomicSync(file, JSON.stringify(rewritten, null, 1) + '\n');
    console.log(`${file}: rewritten (${before.length} numbers unchanged)`);
  }
  // Always a summary line: a check that passes says what it checked (it used to print nothing).
  if (values.check) {
    console.log(`portable-records: ${files.length} record(s) in ${root} checked; ${withPaths === 0 ? 'none holds' : `${withPaths} hold`} an absolute path${withPaths > 0 ? ' (rewrite them with npm run portable-records)' : ''}`);
    return withPaths > 0 ? EXIT.failed : EXIT.ok;
  }
  console.log(`portable-records: ${files.length} record(s) in ${root}; ${withPaths} rewritten`);
  return EXIT.ok;
}

await runCommand('portable-records', main);
