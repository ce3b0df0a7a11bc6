/**
 * `npm run jupyter` (scripts/jupyter.ts) against the Jupyter installed here: it registers the tslab
 * kernel, starts the server with the preset applied, and prints the URL; a client then opens a
 * notebook through the REST API (a session, which starts its tslab kernel), runs a cell over the
 * kernel's websocket that prints the preset's variables and the kernel's working directory, and the
 * command stops the server on SIGTERM. Jupyter's own state (kernelspecs, runtime files) goes to a
 * temporary JUPYTER_DATA_DIR / JUPYTER_CONFIG_DIR / JUPYTER_RUNTIME_DIR, so the machine's Jupyter
 * is untouched, and the clone's git config too (--no-git-filter; the filter has its own test).
 *
 * Skipped, with the reason printed, where Jupyter (or IPython, which tslab install needs) is missing.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { presetVariables } from '../lib/experiments/presets.js';
import { packageRoot } from '../lib/util/package-root.js';
import { findJupyter, frontendVersion, tslabKernelspec } from '../scripts/notebooks/jupyter-install.js';
import { SHARED_DIR } from './helpers/env.js';
import { isolatedJupyterEnv, jupyterUnavailable, startJupyterCommand } from './helpers/jupyter-command.js';
import { closeSession, executeCell, getNotebook, openSession, type JupyterServer } from './helpers/jupyter-kernel-client.js';

const ROOT = packageRoot();
const NOTEBOOK = 'notebooks/00-encode-and-compare.ipynb';

describe('npm run jupyter', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let skip: string | undefined;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'angle-jupyter-'));
    env = isolatedJupyterEnv(dir);
    skip = jupyterUnavailable(env);
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test('registers the kernel, applies the preset, serves a notebook whose kernel sees it, and stops on SIGTERM', { timeout: 300_000 }, async (t) => {
    if (skip) return t.skip(skip);
    // A usable tslab kernel registered outside the temporary JUPYTER_DATA_DIR (system-wide: .ci/run's
    // `tslab install` as root writes /usr/local/share/jupyter/kernels) is kept; else the command registers one.
    const before = tslabKernelspec(findJupyter({}, env), env);
    const usable = before && before.argv[0] !== undefined && existsSync(before.argv[0]) ? before : undefined;
    const preset = SHARED_DIR ? ['--preset', 'smoke', '--shared', SHARED_DIR] : ['--preset', 'paper'];
    const jupyter = startJupyterCommand([...preset, '--no-git-filter'], env);
    const { child, exited } = jupyter;
    try {
      const url = await jupyter.ready;
      const { stdout } = jupyter.output();
      assert.equal(url.hostname, '127.0.0.1');
      assert.equal(url.pathname, '/tree/notebooks');
      if (usable) {
        assert.doesNotMatch(stdout, /jupyter: registered the tslab kernel/);
      } else {
        assert.match(stdout, /jupyter: registered the tslab kernel \((none was registered|the registered one runs \S+, which does not exist)\)/);
        const spec = JSON.parse(readFileSync(join(dir, 'data', 'kernels', 'tslab', 'kernel.json'), 'utf8')) as { argv: string[] };
        assert.equal(spec.argv[0], join(ROOT, 'node_modules', '.bin', 'tslab'));
      }

      const server: JupyterServer = { base: url.origin, token: url.searchParams.get('token')! };
      const nb = await getNotebook(server, NOTEBOOK);
      assert.equal(nb.type, 'notebook');
      assert.equal(nb.content.metadata.kernelspec?.name, 'tslab');
      const session = await openSession(server, NOTEBOOK, 'tslab');
      assert.equal(session.kernel.name, 'tslab');
      const cell = await executeCell(
        server,
        session.kernel.id,
        session.id,
        "for (const k of ['ANGLE_PRESET', 'ANGLE_MODEL', 'ANGLE_DATA_DIR', 'ANGLE_BACKEND']) console.log(`${k}=${process.env[k] ?? ''}`);\nconsole.log(`cwd=${process.cwd()}`);",
      );
      await closeSession(server, session.id);
      assert.equal(cell.error, undefined, cell.stderr);
      const printed = Object.fromEntries(cell.stdout.trimEnd().split('\n').map((l) => l.split(/=(.*)/s).slice(0, 2) as [string, string]));
      if (SHARED_DIR) {
        const smoke = presetVariables('smoke', SHARED_DIR);
        assert.deepEqual(printed, { ANGLE_PRESET: 'smoke', ANGLE_MODEL: smoke.ANGLE_MODEL, ANGLE_DATA_DIR: smoke.ANGLE_DATA_DIR, ANGLE_BACKEND: smoke.ANGLE_BACKEND, cwd: join(ROOT, 'notebooks') });
      } else {
        assert.deepEqual(printed, { ANGLE_PRESET: 'paper', ANGLE_MODEL: presetVariables('paper').ANGLE_MODEL, ANGLE_DATA_DIR: '', ANGLE_BACKEND: presetVariables('paper').ANGLE_BACKEND, cwd: join(ROOT, 'notebooks') });
      }
    } finally {
      child.kill('SIGTERM');
    }
    assert.equal(await exited, 0, jupyter.output().stderr);
    assert.match(jupyter.output().stderr, /jupyter: SIGTERM: stopping the server and its kernels/);
  });

  test('--lab without JupyterLab exits 3 saying what to install', { timeout: 120_000 }, async (t) => {
    if (skip) return t.skip(skip);
    const install = findJupyter({}, env);
    if (!('error' in frontendVersion(install, 'lab', env))) return t.skip('JupyterLab is installed here');
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/jupyter.ts', '--lab', '--preset', 'paper', '--no-git-filter'], { cwd: ROOT, env, encoding: 'utf8' });
    assert.equal(r.status, 3, r.stderr);
    assert.match(r.stderr, /^jupyter: .*JupyterLab is not installed for it: `pip install jupyterlab`/m);
  });
});
