/**
 * npm run jupyter [-- --preset smoke|paper|rehearsal] [--shared <dir>] [--port <n>] [--token <t>] ...
 * npm run lab     (the same with JupyterLab, where it is installed)
 *
 * Jupyter in one command, set up the way the headless runner runs the notebooks:
 *
 * 1. checks every argument, and resolves the preset exactly as `npm run notebooks` does
 *    (scripts/notebooks/environment.ts over lib/experiments/presets.ts): `smoke` by default where
 *    the shared folder exists and ANGLE_MODEL is unset; ANGLE_* variables you set win;
 * 2. finds Jupyter (scripts/notebooks/jupyter-install.ts: Debian's or a pip-installed one) and
 *    registers the tslab kernel when it is missing;
 * 3. sets the notebook clean filter in this clone's git config when it is unset
 *    (scripts/notebooks/git-filter.ts), so executed outputs stay out of commits;
 * 4. with --build (the npm scripts pass it), compiles lib/ to dist/, which the notebooks import;
 * 5. starts the server on 127.0.0.1 with a free port and a token, the preset's variables in its
 *    environment (its kernels inherit them), and prints the URL once the server answers.
 *
 * Ctrl-C (or SIGTERM) stops the server and its kernels; the exit status is then 0. Exit 2: a usage
 * error; 3: Jupyter, JupyterLab or IPython missing (one line says what to install); 1: the server
 * failed to start or stopped by itself with an error.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { delimiter, dirname, join } from 'node:path';
import { UnavailableError } from '../lib/util/errors.js';
import { packageRoot } from '../lib/util/package-root.js';
import { buildLibrary, BuildFailedError } from './cli/build-library.js';
import { EXIT, helpText, parseOptions, runCommand, UsageError, validateArguments, type OptionSpecs } from './cli/command.js';
import { NOTEBOOK_VARIABLES, notebookEnvironment, notebookVariablesLine, type NotebookEnvironment } from './notebooks/environment.js';
import { ensureNotebookFilter, NOTEBOOK_FILTER } from './notebooks/git-filter.js';
import { denoBinary } from './notebooks/deno-binary.js';
import { ensureDenoKernel, ensureTslabKernel, findJupyter, frontendVersion, type JupyterFrontend } from './notebooks/jupyter-install.js';
import { KERNEL_NAMES, type KernelName } from './notebooks/kernels.js';

const OPTIONS = {
  preset: { type: 'string', value: 'smoke|paper|rehearsal', help: "environment defaults for the kernels, as the headless runner's (ANGLE_* variables you set win)", default: 'ANGLE_PRESET, else smoke when ANGLE_MODEL is unset, else none' },
  shared: { type: 'string', value: '<dir>', help: 'the shared directory the smoke preset reads (data/, golden/)', default: 'ANGLE_SHARED_DIR, else ../shared beside the repository, if it exists' },
  lab: { type: 'boolean', help: 'JupyterLab instead of the Notebook (npm run lab passes it)' },
  port: { type: 'string', value: '<n>', help: 'the port on 127.0.0.1', default: 'a free one' },
  token: { type: 'string', value: '<t>', help: "the server's access token (part of the URL printed)", default: 'JUPYTER_TOKEN, else a random one' },
  jupyter: { type: 'string', value: '<path>', help: 'the jupyter executable', default: 'jupyter on PATH, else /usr/bin/jupyter' },
  python: { type: 'string', value: '<path>', help: 'the Python that has Jupyter (for tslab install)', default: "the interpreter in the jupyter script's #! line" },
  'no-git-filter': { type: 'boolean', help: `do not set filter.${NOTEBOOK_FILTER}.clean in this clone's git config` },
  build: { type: 'boolean', help: 'compile lib/ to dist/ (npm run build) once the arguments are checked; the npm scripts pass it' },
  kernel: { type: 'string', value: KERNEL_NAMES.join('|'), help: "the kernel new notebooks start with: tslab (the notebooks' own) or deno (Deno's kernel, registered when missing; a notebook switches with Kernel → Change kernel → Deno); docs/jupyter.md", default: 'tslab' },
  help: { type: 'boolean', short: 'h', help: 'this text' },
} satisfies OptionSpecs;

const USAGE = 'usage: npm run jupyter [-- options]   |   npm run lab [-- options]';
const FOOTER = `The server, and so its kernels, get the preset's variables (${NOTEBOOK_VARIABLES.join(', ')}).
The tslab kernel is registered (per user) when missing; the notebook clean filter is set in .git/config when unset (docs/jupyter.md).
Exit codes: 0 stopped with Ctrl-C, 1 the server failed, 2 usage error, 3 Jupyter/JupyterLab/IPython missing (the line says what to install).`;

/** How long the server may take to answer after it started. */
const READY_TIMEOUT_MS = 120_000;

interface Plan {
  frontend: JupyterFrontend;
  port?: number;
  token: string;
  notebook: NotebookEnvironment;
  jupyter?: string;
  python?: string;
  gitFilter: boolean;
  build: boolean;
  kernel: KernelName;
}

function plan(argv: string[], root: string): Plan | undefined {
  const { values } = parseOptions(OPTIONS, argv);
  if (values.help) return undefined;
  let port: number | undefined;
  if (values.port !== undefined) {
    port = Number(values.port);
    if (!Number.isInteger(port) || port < 1 || port > 65535) throw new UsageError(`--port expects an integer from 1 to 65535, got '${values.port}'`);
  }
  const token = values.token ?? process.env.JUPYTER_TOKEN?.trim() ?? '';
  if (values.token !== undefined && !/^[A-Za-z0-9._~-]+$/.test(values.token)) throw new UsageError('--token: use letters, digits and . _ ~ - (it goes into a URL)');
  const kernel = values.kernel ?? 'tslab';
  if (!(KERNEL_NAMES as readonly string[]).includes(kernel)) throw new UsageError(`--kernel expects one of ${KERNEL_NAMES.join(', ')}, got '${kernel}'`);
  return {
    frontend: values.lab ? 'lab' : 'notebook',
    port,
    token: token || randomBytes(24).toString('hex'),
    notebook: notebookEnvironment({ preset: values.preset, shared: values.shared }, root),
    jupyter: values.jupyter,
    python: values.python,
    gitFilter: !values['no-git-filter'],
    build: values.build ?? false,
    kernel: kernel as KernelName,
  };
}

/** A port on 127.0.0.1 that nothing listens on now. */
function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const s = createServer();
    s.unref();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolvePort(port));
    });
  });
}

/** Resolves once the server answers an authenticated API call; rejects if it exits first or takes too long. */
async function waitUntilReady(base: string, token: string, child: ChildProcess): Promise<void> {
  const t0 = Date.now();
  let exited: string | undefined;
  child.once('exit', (code, signal) => (exited = signal ? `signal ${signal}` : `exit status ${code}`));
  for (;;) {
    if (exited) throw new Error(`the Jupyter server stopped before it answered (${exited}; its messages are above)`);
    try {
      const r = await fetch(`${base}/api/status`, { headers: { Authorization: `token ${token}` } });
      if (r.ok) return;
    } catch {
      /* not listening yet */
    }
    if (Date.now() - t0 > READY_TIMEOUT_MS) throw new Error(`the Jupyter server did not answer at ${base} within ${READY_TIMEOUT_MS / 1000} s`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function main(): Promise<number> {
  const root = packageRoot();
  const p = validateArguments(() => plan(process.argv.slice(2), root));
  if (!p) {
    console.log(helpText(USAGE, OPTIONS, FOOTER));
    return EXIT.ok;
  }
  if (p.notebook.shared) console.log(`shared: ${p.notebook.shared.path} (from ${p.notebook.shared.from})`);

  const install = findJupyter({ jupyter: p.jupyter, python: p.python });
  const front = frontendVersion(install, p.frontend);
  if ('error' in front) throw new UnavailableError(front.error);
  const kernel = ensureTslabKernel(install, root);
  if (kernel.state === 'installed') console.log(`jupyter: registered the tslab kernel (${kernel.why}): ${kernel.dir}`);
  if (p.kernel === 'deno') {
    const deno = ensureDenoKernel(install, denoBinary());
    if (deno.state === 'installed') console.log(`jupyter: registered Deno's kernel (${deno.why}): ${deno.dir}`);
    // The tslab kernelspec stays registered (above), so the committed notebooks, which name it, open in tslab.
    console.log("jupyter: new notebooks start in Deno's kernel; the committed ones open in tslab, the kernel they name (Kernel → Change kernel → Deno switches one)");
  }

  if (p.gitFilter) {
    const f = ensureNotebookFilter(root);
    if (f.state === 'configured') {
      console.log(`jupyter: set git config filter.${NOTEBOOK_FILTER}.clean "${f.command}" in this clone, so notebook outputs stay out of commits (docs/jupyter.md; --no-git-filter skips this)`);
    } else if (f.state === 'no-git') {
      console.log(`jupyter: notebook outputs are not filtered from commits here: ${f.reason}`);
    }
  }
  if (p.build) {
    try {
      buildLibrary(root);
    } catch (e) {
      if (!(e instanceof BuildFailedError)) throw e;
      console.error(`jupyter: ${e.message}`);
      return EXIT.failed;
    }
  } else if (!existsSync(join(root, 'dist', 'index.js'))) {
    console.log('jupyter: dist/ is not built and the notebooks import ../dist/index.js: run npm run build (or start with --build)');
  }

  const port = p.port ?? (await freePort());
  const env: NodeJS.ProcessEnv = {
    ...p.notebook.env,
    JUPYTER_TOKEN: p.token,
    // The kernelspec starts tslab through `#!/usr/bin/env node`: the kernels get this Node.
    PATH: [dirname(process.execPath), p.notebook.env.PATH ?? ''].filter(Boolean).join(delimiter),
  };
  const args = [p.frontend, '--no-browser', '--ip=127.0.0.1', `--port=${port}`, '--port-retries=0', `--notebook-dir=${root}`];
  // New notebooks start with the chosen kernel; the committed ones name tslab and switch with Kernel → Change kernel.
  if (p.kernel !== 'tslab') args.push(`--MultiKernelManager.default_kernel_name=${p.kernel}`);
  // Jupyter refuses to run as root without it (containers, CI machines).
  if (process.getuid?.() === 0) args.push('--allow-root');
  console.log(`jupyter: starting ${install.jupyter} ${p.frontend} (${front.version}); kernels get: ${notebookVariablesLine(env) || 'no ANGLE_* variable'}`);
  const child = spawn(install.jupyter, args, { cwd: root, env, stdio: ['inherit', 'inherit', 'inherit'] });

  let stopping = false;
  const stop = (sig: NodeJS.Signals) => {
    if (stopping) {
      child.kill('SIGKILL');
      return;
    }
    stopping = true;
    console.error(`\njupyter: ${sig}: stopping the server and its kernels (again to kill it at once)`);
    child.kill('SIGTERM');
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.once('exit', (code, signal) => r({ code, signal })));

  const base = `http://127.0.0.1:${port}`;
  try {
    await waitUntilReady(base, p.token, child);
  } catch (e) {
    if (stopping) return EXIT.ok;
    console.error(`jupyter: ${(e as Error).message}`);
    child.kill('SIGTERM');
    await exited;
    return EXIT.failed;
  }
  const path = p.frontend === 'lab' ? 'lab/tree/notebooks' : 'tree/notebooks';
  console.log(`jupyter: ready at ${base}/${path}?token=${p.token}`);
  console.log('jupyter: Ctrl-C stops the server and its kernels');
  const end = await exited;
  if (stopping) return EXIT.ok;
  console.error(`jupyter: the server stopped by itself (${end.signal ? `signal ${end.signal}` : `exit status ${end.code}`})`);
  return end.code === 0 ? EXIT.ok : EXIT.failed;
}

await runCommand('jupyter', main);
