/**
 * A one-node Slurm cluster on localhost for the tests (Debian's slurm-wlm 22.05 and munge): munged,
 * slurmctld and slurmd started in the foreground as children of the test, every file (munge key and
 * socket, slurm.conf, state, spool, logs) in a temp folder, ports picked free, two CPUs. Commands
 * (sbatch, scontrol) reach it through SLURM_CONF, which `env` carries. Needs root (slurmd runs
 * jobs as root here); `slurmMissing()` says why a test must skip.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';

export interface SlurmCluster {
  dir: string;
  /** SLURM_CONF (and PATH) for commands that talk to it. */
  env: Record<string, string>;
  /** The controller's and node daemon's logs, for a failed test's message. */
  logs(): string;
  stop(): Promise<void>;
}

function which(cmd: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}

/** Why a local cluster cannot start here, or undefined when it can. */
export function slurmMissing(): string | undefined {
  const missing = ['munged', 'slurmctld', 'slurmd', 'sbatch', 'scontrol'].filter((c) => !which(c));
  if (missing.length > 0) return `Slurm is not installed (${missing.join(', ')} missing): apt-get install slurm-wlm munge (.ci/run does, as root)`;
  if (process.getuid?.() !== 0) return 'a local Slurm cluster needs root here (slurmd runs the jobs as root)';
  return undefined;
}

function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => res(port));
    });
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((res) => setTimeout(res, ms));
}

/** Starts the cluster and waits until its node is idle (at most `timeoutMs`). */
export async function startSlurmCluster(timeoutMs = 60_000): Promise<SlurmCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'slurm-'));
  // munged wants its socket's folder reachable by all, its key private.
  chmodSync(dir, 0o755);
  for (const d of ['state', 'spool']) mkdirSync(join(dir, d));
  const key = join(dir, 'munge.key');
  writeFileSync(key, randomBytes(1024), { mode: 0o400 });
  const sock = join(dir, 'munge.sock');
  const host = hostname();
  const [ctldPort, dPort] = [await freePort(), await freePort()];
  const conf = join(dir, 'slurm.conf');
  writeFileSync(
    conf,
    [
      'ClusterName=angletest',
      `SlurmctldHost=${host}(127.0.0.1)`,
      'AuthType=auth/munge',
      `AuthInfo=socket=${sock}`,
      'CredType=cred/munge',
      'SlurmUser=root',
      'SlurmdUser=root',
      `SlurmctldPort=${ctldPort}`,
      `SlurmdPort=${dPort}`,
      `StateSaveLocation=${dir}/state`,
      `SlurmdSpoolDir=${dir}/spool`,
      `SlurmctldPidFile=${dir}/slurmctld.pid`,
      `SlurmdPidFile=${dir}/slurmd.pid`,
      `SlurmctldLogFile=${dir}/slurmctld.log`,
      `SlurmdLogFile=${dir}/slurmd.log`,
      // No cgroups in a container: processes tracked by parentage, no task binding.
      'ProctrackType=proctrack/linuxproc',
      'TaskPlugin=task/none',
      'SelectType=select/cons_tres',
      'SelectTypeParameters=CR_CPU',
      'SchedulerType=sched/backfill',
      'AccountingStorageType=accounting_storage/none',
      'JobCompType=jobcomp/none',
      'JobAcctGatherType=jobacct_gather/none',
      'MpiDefault=none',
      'ReturnToService=2',
      'JobRequeue=1',
      'MinJobAge=600',
      // Between SIGTERM and SIGKILL: the requeue test's task blocks until killed, so keep it short.
      'KillWait=5',
      `NodeName=${host} NodeAddr=127.0.0.1 CPUs=2 RealMemory=4000 State=UNKNOWN`,
      `PartitionName=test Nodes=${host} Default=YES MaxTime=INFINITE State=UP`,
      '',
    ].join('\n'),
  );
  const env = { SLURM_CONF: conf };
  const children: ChildProcess[] = [];
  const start = (cmd: string, args: string[]) => {
    const c = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ...env } });
    let err = '';
    c.stderr!.on('data', (b) => (err += b));
    c.on('exit', (code) => {
      if (code) writeFileSync(join(dir, `${cmd}.exit`), `${cmd} exited ${code}: ${err}`);
    });
    children.push(c);
  };
  start('munged', ['-F', '-f', `--socket=${sock}`, `--key-file=${key}`, `--log-file=${dir}/munged.log`, `--pid-file=${dir}/munged.pid`, `--seed-file=${dir}/munged.seed`]);
  await sleep(500);
  start('slurmctld', ['-D', '-i', '-f', conf]);
  await sleep(1000);
  start('slurmd', ['-D', '-f', conf, '-N', host]);
  const logs = () =>
    ['slurmctld.log', 'slurmd.log', 'munged.log', 'munged.exit', 'slurmctld.exit', 'slurmd.exit']
      .map((f) => {
        try {
          return `--- ${f}\n${readFileSync(join(dir, f), 'utf8').split('\n').slice(-15).join('\n')}`;
        } catch {
          return '';
        }
      })
      .join('\n');
  const stop = async () => {
    spawnSync('scancel', ['--full', '-u', 'root'], { env: { ...process.env, ...env }, stdio: 'ignore' });
    for (const c of children.reverse()) {
      c.kill('SIGTERM');
      await new Promise<void>((res) => (c.exitCode !== null || c.signalCode !== null ? res() : c.once('exit', () => res())));
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const until = Date.now() + timeoutMs;
  for (;;) {
    const r = spawnSync('sinfo', ['-h', '-o', '%t'], { env: { ...process.env, ...env }, encoding: 'utf8' });
    if (r.status === 0 && r.stdout.trim() === 'idle') break;
    if (Date.now() > until) {
      const l = logs();
      await stop();
      throw new Error(`the local Slurm cluster did not come up within ${timeoutMs / 1000} s (sinfo: ${r.stdout.trim() || r.stderr.trim()})\n${l}`);
    }
    await sleep(500);
  }
  return { dir, env, logs, stop };
}
