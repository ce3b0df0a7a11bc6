/**
 * The Jupyter installation `npm run jupyter` starts, and the tslab kernel in it.
 *
 * Which Jupyter: `--jupyter <path>`, else `jupyter` on PATH, else /usr/bin/jupyter (Debian's
 * `jupyter-notebook` package: Notebook 6.4 on /usr/bin/python3). A pip-installed one
 * (`pip install notebook` or `jupyterlab`, in a venv or ~/.local/bin) is found on PATH the same way.
 * Its Python, which `tslab install` needs (install.py imports jupyter_client and IPython), is the
 * interpreter in the `jupyter` script's `#!` line, which is how pip and Debian write console
 * scripts; `--python` overrides it.
 *
 * The kernel: jupyter_client's KernelSpecManager (in that Python) says whether a `tslab` kernelspec
 * is registered;
 * when it is missing, or its argv names a tslab that no longer exists, this project's tslab
 * registers it (`tslab install --user --python=<python> --binary=<project>/node_modules/.bin/tslab`):
 * the per-user registry (JUPYTER_DATA_DIR, else ~/.local/share/jupyter/kernels), which needs no
 * administrator rights, is what Jupyter searches first, and which a test can point elsewhere.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import { UnavailableError } from '../../lib/util/errors.js';

/** Where Debian's packages put the `jupyter` command; used when none is on PATH. */
export const DEBIAN_JUPYTER = '/usr/bin/jupyter';

export const JUPYTER_INSTALL_HINT =
  'install it with `apt-get install jupyter-notebook python3-ipython` (Debian) or `pip install notebook` (then JupyterLab too: `pip install jupyterlab`), or pass --jupyter <path>';

export type JupyterFrontend = 'notebook' | 'lab';

export interface JupyterInstall {
  /** The `jupyter` executable. */
  jupyter: string;
  /** The Python that runs it. */
  python: string;
}

function isExecutable(p: string): boolean {
  try {
    accessSync(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** `name` on PATH, or undefined. */
export function onPath(name: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const p = join(dir, name);
    if (isExecutable(p)) return p;
  }
  return undefined;
}

/** The interpreter in a script's `#!` line (`#!/usr/bin/python3`, `#!/usr/bin/env python3`), if it is a Python. */
export function shebangPython(script: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  let first: string;
  try {
    first = readFileSync(script, 'utf8').slice(0, 512).split('\n')[0] ?? '';
  } catch {
    return undefined;
  }
  const m = /^#!\s*(\S+)(?:\s+(\S+))?/.exec(first);
  if (!m) return undefined;
  const [, interp, arg] = m;
  const cmd = interp.endsWith('/env') && arg ? (isAbsolute(arg) ? arg : onPath(arg, env)) : interp;
  return cmd && /python/.test(cmd) ? cmd : undefined;
}

/** The Jupyter to start; throws UnavailableError (exit 3) when there is none. */
export function findJupyter(given: { jupyter?: string; python?: string }, env: NodeJS.ProcessEnv = process.env): JupyterInstall {
  let jupyter: string | undefined;
  if (given.jupyter) {
    if (!isExecutable(given.jupyter)) throw new UnavailableError(`--jupyter ${given.jupyter} is not an executable file; ${JUPYTER_INSTALL_HINT}`);
    jupyter = given.jupyter;
  } else {
    jupyter = onPath('jupyter', env) ?? (isExecutable(DEBIAN_JUPYTER) ? DEBIAN_JUPYTER : undefined);
  }
  if (!jupyter) throw new UnavailableError(`Jupyter is not installed here (no jupyter on PATH, no ${DEBIAN_JUPYTER}); ${JUPYTER_INSTALL_HINT}`);
  const python = given.python ?? shebangPython(jupyter, env);
  if (!python) throw new UnavailableError(`cannot tell which Python runs ${jupyter} (its first line names none): pass --python <the python that has Jupyter>`);
  return { jupyter, python };
}

/** The version of a front end (`jupyter notebook --version`, `jupyter lab --version`), or why it cannot run. */
export function frontendVersion(install: JupyterInstall, frontend: JupyterFrontend, env: NodeJS.ProcessEnv = process.env): { version: string } | { error: string } {
  const r = spawnSync(install.jupyter, [frontend, '--version'], { encoding: 'utf8', env, timeout: 60_000 });
  if (r.status === 0) return { version: (r.stdout ?? '').trim().split('\n').pop() ?? '' };
  const why = (r.stderr ?? '').trim().split('\n').pop() || r.error?.message || `exit ${r.status}`;
  const hint = frontend === 'lab' ? 'JupyterLab is not installed for it: `pip install jupyterlab` (Debian has no package), or use `npm run jupyter` (the Notebook)' : JUPYTER_INSTALL_HINT;
  return { error: `\`${install.jupyter} ${frontend}\` does not run (${why}); ${hint}` };
}

/**
 * The registered tslab kernelspec, or undefined when there is none. Asked of jupyter_client in
 * Jupyter's own Python (what the server uses to find kernels): Debian's packages do not install
 * the `jupyter kernelspec` subcommand.
 */
export function tslabKernelspec(install: JupyterInstall, env: NodeJS.ProcessEnv = process.env): { argv: string[]; dir: string } | undefined {
  return kernelspec(install, 'tslab', env);
}

/** The registered kernelspec `name`, or undefined when there is none (see tslabKernelspec). */
export function kernelspec(install: JupyterInstall, name: string, env: NodeJS.ProcessEnv = process.env): { argv: string[]; dir: string } | undefined {
  const code = 'import json; from jupyter_client.kernelspec import KernelSpecManager; print(json.dumps(KernelSpecManager().get_all_specs()))';
  const r = spawnSync(install.python, ['-c', code], { encoding: 'utf8', env, timeout: 60_000 });
  if (r.status !== 0) {
    throw new UnavailableError(`${install.python} cannot list Jupyter's kernels (${(r.stderr ?? '').trim().split('\n').pop() || r.error?.message || `exit ${r.status}`}): is it the Python that runs ${install.jupyter}? Pass --python; ${JUPYTER_INSTALL_HINT}`);
  }
  const line = (r.stdout ?? '').trim().split('\n').pop() ?? '{}';
  const specs = JSON.parse(line) as Record<string, { resource_dir: string; spec: { argv?: string[] } }>;
  const t = specs[name];
  return t ? { argv: t.spec.argv ?? [], dir: t.resource_dir } : undefined;
}

/**
 * Registers Deno's kernel (`deno`, as `deno jupyter --install` would: the same kernel.json) in the
 * per-user registry Jupyter's own Python reports, with this project's deno binary (the dev
 * dependency `deno`), when no usable `deno` kernelspec is there.
 */
export function ensureDenoKernel(install: JupyterInstall, deno: string, env: NodeJS.ProcessEnv = process.env): KernelState {
  const existing = kernelspec(install, 'deno', env);
  const binary = existing?.argv[0];
  if (existing && binary && (!isAbsolute(binary) || existsSync(binary))) return { state: 'present', dir: existing.dir };
  const why = existing ? `the registered one runs ${binary}, which does not exist` : 'none was registered';
  if (!existsSync(deno)) throw new UnavailableError(`Deno is not installed here (${deno}): run npm ci (the dev dependency \`deno\` brings its binary)`);
  const r = spawnSync(install.python, ['-c', 'from jupyter_core.paths import jupyter_data_dir; print(jupyter_data_dir())'], { encoding: 'utf8', env, timeout: 60_000 });
  const dataDir = (r.stdout ?? '').trim().split('\n').pop();
  if (r.status !== 0 || !dataDir) throw new UnavailableError(`${install.python} cannot say where Jupyter's per-user data is (${(r.stderr ?? '').trim().split('\n').pop() || `exit ${r.status}`}); pass --python`);
  const dir = join(dataDir, 'kernels', 'deno');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'kernel.json'), `${JSON.stringify({ argv: [deno, 'jupyter', '--kernel', '--conn', '{connection_file}'], display_name: 'Deno', language: 'typescript' }, null, 2)}\n`);
  return { state: 'installed', dir, why };
}

export type KernelState = { state: 'present'; dir: string } | { state: 'installed'; dir: string; why: string };

/** Registers this project's tslab when no usable tslab kernelspec is there; see the file comment. */
export function ensureTslabKernel(install: JupyterInstall, root: string, env: NodeJS.ProcessEnv = process.env): KernelState {
  const existing = tslabKernelspec(install, env);
  const binary = existing?.argv[0];
  if (existing && binary && (!isAbsolute(binary) || existsSync(binary))) return { state: 'present', dir: existing.dir };
  const why = existing ? `the registered one runs ${binary}, which does not exist` : 'none was registered';
  const ipython = spawnSync(install.python, ['-c', 'import jupyter_client, IPython'], { encoding: 'utf8', env });
  if (ipython.status !== 0) {
    throw new UnavailableError(
      `the tslab kernel is not registered (${why}) and \`tslab install\` needs jupyter_client and IPython in ${install.python}: ` +
        '`apt-get install python3-ipython` (Debian) or `pip install ipython` in that environment, or pass --python',
    );
  }
  const tslabMain = join(root, 'node_modules', 'tslab', 'bin', 'tslab');
  const tslabBin = join(root, 'node_modules', '.bin', 'tslab');
  if (!existsSync(tslabMain)) throw new UnavailableError(`tslab is not installed in ${join(root, 'node_modules')} (run npm ci)`);
  const r = spawnSync(process.execPath, [tslabMain, 'install', '--user', `--python=${install.python}`, `--binary=${tslabBin}`], { encoding: 'utf8', env });
  if (r.status !== 0) throw new UnavailableError(`tslab install failed: ${((r.stderr ?? '') + (r.stdout ?? '')).trim().split('\n').slice(-2).join(' ')}`);
  const after = tslabKernelspec(install, env);
  if (!after) throw new UnavailableError('tslab install ran, but Jupyter still lists no tslab kernel (JUPYTER_PATH / JUPYTER_DATA_DIR point elsewhere?)');
  return { state: 'installed', dir: after.dir, why };
}
