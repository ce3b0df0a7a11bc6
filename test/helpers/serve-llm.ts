/**
 * Starts the real `scripts/serve-llm.ts` in a child process (on a free port) and stops it: the
 * tests of the chat client and server talk to it over HTTP on 127.0.0.1, never to a stub.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('../..', import.meta.url));

export interface ServeLlm {
  baseURL: string;
  child: ChildProcess;
  /** What the server wrote on stderr (its request log). */
  stderr(): string;
  /** SIGTERM, then its exit code. */
  stop(): Promise<number | null>;
}

/** Runs `node --import tsx scripts/serve-llm.ts <args>` and returns its output and exit code. */
export function runServeLlm(args: string[], timeoutMs = 60_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/serve-llm.ts', ...args], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Starts serve-llm with `args` (plus --port 0) and waits until it listens. */
export function startServeLlm(args: string[], timeoutMs = 60_000): Promise<ServeLlm> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/serve-llm.ts', '--port', '0', ...args], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`serve-llm did not start within ${timeoutMs} ms; stderr:\n${stderr}`));
    }, timeoutMs);
    child.stderr!.on('data', (d) => (stderr += d));
    child.stdout!.on('data', (d) => {
      stdout += d;
      const m = /listening on (\S+)/.exec(stdout);
      if (m) {
        clearTimeout(timer);
        resolve({
          baseURL: m[1],
          child,
          stderr: () => stderr,
          stop: async () => {
            child.kill('SIGTERM');
            return exited;
          },
        });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve-llm exited (${code}) before listening; stderr:\n${stderr}`));
    });
  });
}
