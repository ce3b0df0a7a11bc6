/**
 * The backend choice `auto` (ANGLE_BACKEND=auto, the `paper` preset's): the fastest backend this
 * machine can start, in order
 *
 *   1. `cuda`  — the native addon (build/cuda/angle_cuda.node, or ANGLE_CUDA_ADDON) is built, loads,
 *                and a device answers (./cuda/addon.ts `loadAddon` says why not otherwise);
 *   2. `wasm`  — tfjs-backend-wasm (XNNPACK): on BERT-base it embeds 33× faster than `cpu`
 *                (environment.md) and trains faster too (bench/results/cpu-bert-base-train-step-*.json);
 *   3. `cpu`   — plain JavaScript, which always starts.
 *
 * It never throws for a backend that cannot start: it goes down the list and records why, so the
 * one line initBackend prints says which backend runs and why the better ones did not. `tensorflow`
 * (tfjs-node) is never chosen: it is only there when a user installed it, and then asks for it by name.
 */
import { existsSync } from 'node:fs';
import { UnavailableError } from '../util/errors.js';
import { addonPath } from './cuda/addon.js';
import type { BackendName } from './names.js';

/** The name initBackend accepts for this choice. */
export const AUTO_BACKEND = 'auto';

/** The order `auto` tries. */
export const AUTO_ORDER: readonly BackendName[] = ['cuda', 'wasm', 'cpu'];

export interface AutoChoice {
  name: BackendName;
  /** What the backend's start returned: the device description. */
  device: string;
  /** Why this backend and not a better one, for the log line ("cuda unavailable: …"). */
  why: string;
}

/** "backend 'cuda' is unavailable: X" → "X"; other errors keep their text. */
function reasonOf(e: unknown): string {
  const msg = e instanceof Error ? e.message : String(e);
  return msg.replace(/^backend '\w+' is unavailable: /, '').replace(/\s+/g, ' ').trim();
}

/**
 * Starts the first backend of AUTO_ORDER that starts, with `start` (initBackend's). Throws only
 * when even `cpu` fails, which is a broken installation, not a missing GPU.
 */
export async function startAuto(start: (name: BackendName) => Promise<string>): Promise<AutoChoice> {
  const skipped: string[] = [];
  for (const name of AUTO_ORDER) {
    // Without the addon file there is nothing to try: say so without importing the cuda module.
    if (name === 'cuda') {
      const path = addonPath();
      if (!existsSync(path)) {
        skipped.push(`cuda unavailable (the native addon ${path} is not built: \`npm run build:cuda\` on a host with the CUDA toolkit, docs/gpu.md)`);
        continue;
      }
    }
    try {
      const device = await start(name);
      const why = name === 'cuda' ? 'the cuda addon loaded and a device answered' : skipped.join('; ');
      return { name, device, why };
    } catch (e) {
      if (name === 'cpu') throw e;
      skipped.push(`${name} unavailable (${e instanceof UnavailableError ? reasonOf(e) : `failed to start: ${reasonOf(e)}`})`);
    }
  }
  // Unreachable: the loop returns at cpu or rethrows its error.
  throw new Error('auto: no backend started');
}
