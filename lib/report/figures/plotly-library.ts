/**
 * Where plotly.js is on this machine: the `plotly.js-dist-min` bundle in the project's
 * node_modules (a dependency), resolved from the package root so it is found the same way from
 * lib/ (tsx), dist/ (notebooks) and scripts/. Figures never load plotly from a CDN: notebooks and
 * the static renderer work without network.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { UnavailableError } from '../../util/errors.js';
import { packageRoot } from '../../util/package-root.js';

export const PLOTLY_PACKAGE = 'plotly.js-dist-min';

export interface PlotlyLibrary {
  /** Absolute path of plotly.min.js. */
  path: string;
  version: string;
}

let cached: PlotlyLibrary | undefined;

export function plotlyLibrary(): PlotlyLibrary {
  if (cached) return cached;
  const require = createRequire(join(packageRoot(), 'package.json'));
  let path: string;
  let version: string;
  try {
    path = require.resolve(PLOTLY_PACKAGE);
    version = (JSON.parse(readFileSync(require.resolve(`${PLOTLY_PACKAGE}/package.json`), 'utf8')) as { version: string }).version;
  } catch {
    throw new UnavailableError(`${PLOTLY_PACKAGE} is not installed in ${join(packageRoot(), 'node_modules')} (a dependency of this project: run npm install)`);
  }
  cached = { path, version };
  return cached;
}

let source: string | undefined;

/** The text of plotly.min.js (about 4.8 MB for plotly.js 4), read once per process. */
export function plotlyLibrarySource(): string {
  source ??= readFileSync(plotlyLibrary().path, 'utf8');
  return source;
}
