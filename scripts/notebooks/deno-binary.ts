/**
 * Where Deno's binary is: the one the dev dependency \`deno\` installs (npm's package brings the
 * platform's binary), for the headless runner's Deno kernel (./deno-kernel.ts) and for the
 * kernelspec \`npm run jupyter -- --kernel deno\` registers (../jupyter.ts).
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { arch, platform } from 'node:os';
import { dirname, join } from 'node:path';

/** The deno binary: DENO_BIN, else the npm package's (installed as a dev dependency), else `deno` on PATH. */
export function denoBinary(): string {
  if (process.env.DENO_BIN) return process.env.DENO_BIN;
  const require = createRequire(import.meta.url);
  const exe = platform() === 'win32' ? 'deno.exe' : 'deno';
  try {
    const pkg = dirname(require.resolve('deno/package.json'));
    // The package's postinstall links the platform binary beside itself; where install scripts
    // did not run, the binary is in the platform package.
    const candidates = [join(pkg, exe)];
    for (const libc of ['glibc', 'musl', '']) {
      const name = `@deno/${platform()}-${arch()}${libc ? `-${libc}` : ''}`;
      try {
        candidates.push(join(dirname(require.resolve(`${name}/package.json`)), exe));
      } catch {
        /* not this platform's package */
      }
    }
    const found = candidates.find((p) => existsSync(p));
    if (found) return found;
  } catch {
    /* the package is not installed */
  }
  return 'deno';
}

