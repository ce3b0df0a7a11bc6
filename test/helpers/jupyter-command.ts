/**
 * `npm run jupyter` (scripts/jupyter.ts) as the Jupyter tests start it: whether this machine can
 * (Jupyter's classic Notebook and IPython for tslab), Jupyter's own state in a temporary folder, and
 * the command started until it prints its URL. What test/jupyter-command, test/jupyter-live and
 * test/jupyter-parameter-cell each wrote out before.
 */
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import { packageRoot } from '../../lib/util/package-root.js';
import { findJupyter, frontendVersion } from '../../scripts/notebooks/jupyter-install.js';

/** Why this machine cannot serve notebooks through `npm run jupyter`, or undefined. */
export function jupyterUnavailable(env: NodeJS.ProcessEnv): string | undefined {
  try {
    const install = findJupyter({}, env);
    const v = frontendVersion(install, 'notebook', env);
    if ('error' in v) return v.error;
    if (spawnSync(install.python, ['-c', 'import jupyter_client, IPython'], { env }).status !== 0) return `tslab install needs jupyter_client and IPython in ${install.python}`;
  } catch (e) {
    return (e as Error).message;
  }
  return undefined;
}

/** This process's environment without ANGLE_* (the command's preset decides them) and JUPYTER*, Jupyter's state in `dir`. */
export function isolatedJupyterEnv(dir: string): NodeJS.ProcessEnv {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ANGLE_') && !k.startsWith('JUPYTER')));
  return { ...clean, JUPYTER_DATA_DIR: join(dir, 'data'), JUPYTER_CONFIG_DIR: join(dir, 'config'), JUPYTER_RUNTIME_DIR: join(dir, 'runtime'), IPYTHONDIR: join(dir, 'ipython') };
}

export interface JupyterCommand {
  child: ChildProcessWithoutNullStreams;
  /** The URL of its "jupyter: ready at" line; rejects after 120 s or when the command exits first. */
  ready: Promise<URL>;
  /** Its exit code once it exits. */
  exited: Promise<number | null>;
  /** What it printed so far. */
  output(): { stdout: string; stderr: string };
}

/** Starts `scripts/jupyter.ts <args>` from the repository root. */
export function startJupyterCommand(args: string[], env: NodeJS.ProcessEnv): JupyterCommand {
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/jupyter.ts', ...args], { cwd: packageRoot(), env, stdio: 'pipe' });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b) => (stdout += b));
  child.stderr.on('data', (b) => (stderr += b));
  const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
  const ready = new Promise<URL>((resolveUrl, reject) => {
    const timer = setTimeout(() => reject(new Error(`no "ready at" line within 120 s:\n${stdout}\n${stderr}`)), 120_000);
    child.stdout.on('data', () => {
      const m = /jupyter: ready at (\S+)/.exec(stdout);
      if (m) {
        clearTimeout(timer);
        resolveUrl(new URL(m[1]!));
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`the command exited (${code}) before it was ready:\n${stdout}\n${stderr}`));
    });
  });
  // A rejection nobody awaits (the test failed earlier) must not end the test process.
  ready.catch(() => {});
  return { child, ready, exited, output: () => ({ stdout, stderr }) };
}
