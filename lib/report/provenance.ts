/**
 * Where a result came from: code version, software versions, backend and device.
 * Collected once per run and stored in its results file, so a number can be traced to the
 * commit and machine that produced it.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { arch, cpus, hostname, platform, totalmem } from 'node:os';
import { join } from 'node:path';
import { activeBackend } from '../backend/index.js';
import { packageRoot } from '../util/package-root.js';

export interface Provenance {
  gitCommit: string;
  /** Uncommitted changes to tracked files when the run started. */
  gitDirty: boolean | 'unknown';
  node: string;
  platform: string;
  cpu: string;
  memoryGiB: number;
  hostname: string;
  backend: string;
  device: string;
  packages: Record<string, string>;
}

const PACKAGES = ['@tensorflow/tfjs-core', '@tensorflow/tfjs-backend-cpu', '@tensorflow/tfjs-backend-wasm', '@huggingface/tokenizers', 'simple-statistics'];

function git(args: string[], cwd: string): string | undefined {
  try {
    return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return undefined;
  }
}

function packageVersion(root: string, name: string): string | undefined {
  try {
    const req = createRequire(join(root, 'package.json'));
    return JSON.parse(readFileSync(req.resolve(`${name}/package.json`), 'utf8')).version as string;
  } catch {
    try {
      return JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')).version as string;
    } catch {
      return undefined;
    }
  }
}

export function collectProvenance(): Provenance {
  const root = packageRoot();
  const commit = git(['rev-parse', 'HEAD'], root);
  const status = commit ? git(['status', '--porcelain', '--untracked-files=no'], root) : undefined;
  const packages: Record<string, string> = {};
  for (const p of PACKAGES) {
    const v = packageVersion(root, p);
    if (v) packages[p] = v;
  }
  const b = activeBackend();
  const c = cpus();
  return {
    gitCommit: commit ?? 'unknown (not a git checkout)',
    gitDirty: status === undefined ? 'unknown' : status.length > 0,
    node: process.version,
    platform: `${platform()} ${arch()}`,
    cpu: `${c[0]?.model?.trim() ?? 'unknown'} x ${c.length}`,
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    hostname: hostname(),
    backend: b?.name ?? 'none started',
    device: b?.device ?? 'unknown',
    packages,
  };
}
