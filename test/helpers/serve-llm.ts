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
  /**
   * Waits until the request log matches `re` (the server logs a request after its response is
   * sent, so the line can arrive after the client has its answer); rejects with the log after `ms`.
   */
  waitForLog(re: RegExp, ms?: number): Promise<void>;
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

/**
 * `--generation-thread` for every server these tests start, from ANGLE_TEST_GENERATION_THREAD
 * (worker or main; unset: the command's default, worker), so the server tests run in both modes.
 */
function generationThreadArgs(): string[] {
  const thread = process.env.ANGLE_TEST_GENERATION_THREAD;
  return thread ? ['--generation-thread', thread] : [];
}

/** Starts serve-llm with `args` (plus --port 0) and waits until it listens. */
export function startServeLlm(args: string[], timeoutMs = 60_000): Promise<ServeLlm> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/serve-llm.ts', '--port', '0', ...generationThreadArgs(), ...args], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
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
          waitForLog: (re, ms = 5000) =>
            new Promise<void>((ok, fail) => {
              const t0 = Date.now();
              const poll = setInterval(() => {
                if (re.test(stderr)) ok();
                else if (Date.now() - t0 > ms) fail(new Error(`no line matching ${re} in the server's log within ${ms} ms:\n${stderr}`));
                else return;
                clearInterval(poll);
              }, 20);
            }),
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
