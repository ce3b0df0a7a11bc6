/**
 * The public face of the library: what notebooks and scripts import, one namespace per folder.
 * Data flows one way: data -> tokenizer -> model -> pooling -> loss / evaluator -> results -> report.
 *
 *   import * as angle from '../dist/index.js';
 *   await angle.initBackend();
 *   const m = await angle.loadModel('google-bert/bert-base-uncased');
 *   const enc = new angle.embed.PooledSentenceEncoder(m, { pooling: 'cls' });
 *   const r = await angle.eval.evaluateStsSuite(enc);
 *
 * Golden parity checks (lib/parity) and the notebook runner (scripts/notebooks) are not part of it:
 * scripts and tests import those directly.
 */
export { tf, initBackend, activeBackend, BACKEND_NAMES, type BackendName, type BackendInfo } from './backend/index.js';
export { loadModel } from './models/auto.js';
export { envConfig, type EnvConfig } from './config.js';
export { InputError, UnavailableError, UnknownNameError } from './util/errors.js';
export { Progress } from './util/progress.js';

export * as hub from './hub/index.js';
export * as models from './models/index.js';
export * as llm from './llm/index.js';
export * as embed from './embed/index.js';
export * as losses from './losses/index.js';
export * as eval from './eval/index.js';
export * as data from './data/index.js';
export * as train from './train/index.js';
export * as report from './report/index.js';
export * as paper from './paper/index.js';
export * as experiments from './experiments/index.js';
export * as notebook from './notebook/index.js';
