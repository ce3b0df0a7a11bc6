import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const PACKAGE_NAME = 'angle-notebooks';

/**
 * The project's root directory, found by walking up from this file until the package.json
 * named `angle-notebooks`. Works from lib/ (tsx) and from dist/ (built, tslab).
 */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pj = join(dir, 'package.json');
    if (existsSync(pj)) {
      try {
        if (JSON.parse(readFileSync(pj, 'utf8')).name === PACKAGE_NAME) return dir;
      } catch {
        /* a foreign or broken package.json: keep walking */
      }
    }
    const up = dirname(dir);
    if (up === dir) throw new Error(`cannot find the ${PACKAGE_NAME} package root above ${fileURLToPath(import.meta.url)}`);
    dir = up;
  }
}
