/**
 * Compiling lib/ to dist/ (what the notebooks import: `../dist/index.js`), as `npm run build`
 * does: `tsc -p tsconfig.build.json` with this project's TypeScript. Commands that start notebooks
 * (`npm run notebooks`, `npm run jupyter`) call it after their arguments were checked, so a typo
 * is reported in a second instead of after the build; their npm scripts pass `--build`.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { UnavailableError } from '../../lib/util/errors.js';

export class BuildFailedError extends Error {
  constructor(readonly status: number | null) {
    super(`building lib/ into dist/ failed (tsc exit status ${status ?? 'signal'}; its messages are above)`);
    this.name = 'BuildFailedError';
  }
}

/** Runs the build in `root`, its output on this process's stdout/stderr; returns the seconds it took. */
export function buildLibrary(root: string, log: (line: string) => void = (l) => console.log(l)): number {
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  if (!existsSync(tsc)) throw new UnavailableError(`TypeScript is not installed in ${join(root, 'node_modules')} (run npm ci)`);
  log('building lib/ into dist/ (tsc -p tsconfig.build.json, as npm run build)...');
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new BuildFailedError(r.status);
  const seconds = (performance.now() - t0) / 1000;
  log(`built dist/ in ${seconds.toFixed(1)} s`);
  return seconds;
}
