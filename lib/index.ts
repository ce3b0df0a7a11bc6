/**
 * The public face of the library: what notebooks import (`import * as angle from '../dist/index.js'`),
 * one namespace per area. Data flows one way: data -> tokenizer -> model -> pooling -> loss /
 * evaluator -> results -> report.
 *
 *   import * as angle from '../dist/index.js';
 *   await angle.initBackend();
 *   const m = await angle.loadModel('google-bert/bert-base-uncased');
 *   const enc = new angle.embed.PooledSentenceEncoder(m, { pooling: 'cls' });
 *   const r = await angle.eval.stsEvaluator(angle.data.loadStsBenchmark('test')).evaluate(enc);
 *
 * Curated: experiments, models, embed, llm, report and notebook export what the notebooks and the
 * docs use, no more (test/public-surface.test.ts checks every `angle.<area>.<name>` they write is
 * here, and that these areas export nothing else); the rest of lib/ is internal. data, eval and
 * paper still export their folder's whole barrel, which scripts and tests import too; hub, losses
 * and train, which no notebook uses, are not here. The commands (scripts/) and tests import lib's
 * files directly; golden parity checks (lib/parity) and the notebook runner (scripts/notebooks) are
 * not part of it.
 */
export { tf, initBackend, activeBackend, BACKEND_NAMES, type BackendName, type BackendInfo } from './backend/index.js';
export { loadModel } from './models/auto.js';
export { envConfig, type EnvConfig } from './config.js';
export { InputError, UnavailableError, UnknownNameError } from './util/errors.js';
export { Progress } from './util/progress.js';

export * as models from './models/index.js';
export * as llm from './llm/index.js';
export * as embed from './embed/index.js';
export * as eval from './eval/index.js';
export * as data from './data/index.js';
export * as report from './report/index.js';
export * as paper from './paper/index.js';
export * as experiments from './experiments/index.js';
export * as notebook from './notebook/index.js';
