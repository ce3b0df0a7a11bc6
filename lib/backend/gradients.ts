/**
 * Gradient registration for tfjs-core.
 *
 * The CommonJS bundle that Node loads for `@tensorflow/tfjs-core` (dist/tf-core.node.js)
 * contains no gradient functions: they live only in the package's ES-module sources
 * (dist/register_all_gradients.js and dist/gradients/*), which Node cannot load directly
 * (extensionless relative imports in a non-"type: module" package). We bundle that entry point
 * once with esbuild into build/ and load it. The bundle's copies of the op helpers talk to the
 * same global engine and the same global gradient registry as tf-core.node.js (tfjs keeps both
 * in the global namespace), so `tf.grad` sees every gradient.
 */
import * as tf from '@tensorflow/tfjs-core';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { writeFileAtomicSync } from '../util/atomic-write.js';
import { UnavailableError } from '../util/errors.js';
import { packageRoot } from '../util/package-root.js';
import { registerGradientOverrides } from './gradient-overrides.js';

const require = createRequire(import.meta.url);

/** A kernel whose gradient every model here needs; its presence means registration happened. */
const PROBE_KERNEL = 'BatchMatMul';

export function gradientsRegistered(): boolean {
  return tf.getGradient(PROBE_KERNEL) !== undefined;
}

/** Path of the generated gradient bundle for the installed tfjs-core version. */
export function gradientBundlePath(): string {
  return join(packageRoot(), 'build', `tfjs-gradients-${tf.version_core}.cjs`);
}

/** Writes the gradient bundle (esbuild, a dev dependency via tsx), atomically. */
export function buildGradientBundle(out = gradientBundlePath()): string {
  let esbuild: typeof import('esbuild');
  try {
    esbuild = require('esbuild');
  } catch {
    throw new UnavailableError(
      `tfjs gradient bundle ${out} is missing and esbuild is not installed to build it; ` +
        'run `npm ci` (esbuild comes with the dev dependencies) or copy build/ from a machine that ran `npm run build`',
    );
  }
  const entry = require.resolve('@tensorflow/tfjs-core/dist/register_all_gradients.js');
  const built = esbuild.buildSync({ entryPoints: [entry], bundle: true, platform: 'node', format: 'cjs', write: false, logLevel: 'error' });
  writeFileAtomicSync(out, built.outputFiles[0].contents);
  return out;
}

/** Registers tfjs-core's gradient functions once per process. */
export function registerGradients(): void {
  if (gradientsRegistered()) return;
  const bundle = gradientBundlePath();
  if (!existsSync(bundle)) buildGradientBundle(bundle);
  require(bundle);
  if (!gradientsRegistered()) {
    throw new Error(`loading ${bundle} did not register the tfjs gradients (is it from another tfjs-core version?)`);
  }
  // The same numbers without full-size tensors of ones (./gradient-overrides.ts).
  registerGradientOverrides();
}
