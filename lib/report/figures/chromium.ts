/**
 * Headless Chromium for drawing figures to files and for the browser check of executed notebooks
 * (scripts/check-rendered.ts): the system's Chromium (Debian's `chromium` package, or any Chrome
 * named by CHROMIUM_PATH), driven through `playwright-core` (a dev dependency: the DevTools
 * protocol client alone, it downloads no browser).
 *
 * The flags keep Chromium quiet on machines without network: no sandbox (containers, root), no GPU,
 * and none of the background connections (component updates, sync, QUIC probes) that would
 * otherwise fail by the dozen. playwright gives each launch a fresh temporary profile.
 */
import { existsSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { UnavailableError } from '../../util/errors.js';

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
] as const;

/** Where Chromium is looked for when CHROMIUM_PATH is unset, in order. */
export const CHROMIUM_CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome', '/usr/bin/google-chrome-stable'] as const;

export const CHROMIUM_INSTALL_HINT =
  'install it with `apt-get install chromium` (Debian; Ubuntu: a Chrome or Chromium binary) or point CHROMIUM_PATH at a Chrome/Chromium executable';

/** The Chromium executable to use, or undefined when there is none. */
export function findChromium(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const given = env.CHROMIUM_PATH?.trim();
  if (given) return existsSync(given) ? given : undefined;
  return CHROMIUM_CANDIDATES.find((p) => existsSync(p));
}

/** Why Chromium cannot be used here, in one line, or undefined when it can. */
export function chromiumUnavailableReason(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const given = env.CHROMIUM_PATH?.trim();
  if (given && !existsSync(given)) return `CHROMIUM_PATH=${given} does not exist; ${CHROMIUM_INSTALL_HINT}`;
  if (!findChromium(env)) return `no Chromium found (looked for ${CHROMIUM_CANDIDATES.join(', ')}); ${CHROMIUM_INSTALL_HINT}`;
  return undefined;
}

/** Starts headless Chromium. Throws UnavailableError, saying how to install it, when it is missing. */
export async function launchChromium(opts: { executablePath?: string } = {}): Promise<Browser> {
  const executablePath = opts.executablePath ?? findChromium();
  if (!executablePath) throw new UnavailableError(`headless Chromium is needed to draw figures: ${chromiumUnavailableReason()}`);
  if (!existsSync(executablePath)) throw new UnavailableError(`headless Chromium is needed to draw figures: ${executablePath} does not exist; ${CHROMIUM_INSTALL_HINT}`);
  let chromium: typeof import('playwright-core').chromium;
  try {
    ({ chromium } = await import('playwright-core'));
  } catch {
    throw new UnavailableError('playwright-core is not installed (a dev dependency of this project: run npm install)');
  }
  return chromium.launch({ executablePath, headless: true, args: [...CHROMIUM_ARGS] });
}
