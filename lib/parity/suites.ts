/**
 * The golden parity suites `npm run parity` runs, in order. Each reads its own files from the
 * golden directory; a suite whose file is absent from a set is reported as a failed check, so
 * a partial golden set cannot pass by omission.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ParityCheck } from './check.js';
import { sharedPoolingEncoders } from '../embed/encoder.js';
import type { SentenceEncoder } from '../embed/types.js';
import { checkEvalGolden } from './eval.js';
import { checkLossesGolden } from './losses.js';
import { loadModel } from '../models/auto.js';
import { checkTrainGolden } from './train.js';
import { InputError } from '../util/errors.js';
import { checkForwardGolden } from './forward.js';

export const GOLDEN_SUITE_NAMES = ['forward', 'losses', 'eval', 'train'] as const;
export type GoldenSuiteName = (typeof GOLDEN_SUITE_NAMES)[number];

export interface GoldenSuite {
  name: GoldenSuiteName;
  run(): Promise<ParityCheck[]>;
}

export interface GoldenSuiteOptions {
  goldenDir: string;
  /** Data root for suites that read evaluation data (eval, train). */
  dataDir?: string;
  /** Progress lines of long suites. */
  log?: (line: string) => void;
  only?: GoldenSuiteName[];
}

function needsFile(goldenDir: string, file: string, name: string, run: () => Promise<ParityCheck[]>): () => Promise<ParityCheck[]> {
  return async () => (existsSync(join(goldenDir, file)) ? run() : [{ name, ok: false, detail: `${join(goldenDir, file)} is missing` }]);
}

export function goldenSuites(o: GoldenSuiteOptions): GoldenSuite[] {
  const all: GoldenSuite[] = [
    { name: 'forward', run: needsFile(o.goldenDir, 'forward.safetensors', 'forward', () => checkForwardGolden(o.goldenDir)) },
    { name: 'losses', run: needsFile(o.goldenDir, 'losses.json', 'losses', () => checkLossesGolden(o.goldenDir)) },
    { name: 'eval', run: needsFile(o.goldenDir, 'eval.json', 'eval', () => checkEvalWithGoldenModel(o)) },
    { name: 'train', run: needsFile(o.goldenDir, 'train.json', 'train', () => checkTrainWithData(o)) },
  ];
  return all.filter((s) => !o.only || o.only.includes(s.name));
}

/**
 * eval.json with the golden model: `cls` and `avg` (the poolings the reference reports) come out
 * of one shared forward pass per sentence; any other pooling gets its own encoder.
 */
async function checkEvalWithGoldenModel(o: GoldenSuiteOptions): Promise<ParityCheck[]> {
  if (!o.dataDir) throw new InputError('the eval suite reads evaluation data: pass --data <dir> or set ANGLE_DATA_DIR');
  const m = await loadModel(join(o.goldenDir, 'model'));
  try {
    const shared = new Map<number, Map<string, SentenceEncoder>>();
    return await checkEvalGolden(
      o.goldenDir,
      o.dataDir,
      async (pooling, maxLength) => {
        let set = shared.get(maxLength);
        if (!set) {
          set = sharedPoolingEncoders(m, ['cls', 'avg'], { maxLength, batchSize: 128 }).encoders as Map<string, SentenceEncoder>;
          shared.set(maxLength, set);
        }
        const enc = set.get(pooling);
        if (enc) return enc;
        return sharedPoolingEncoders(m, [pooling], { maxLength, batchSize: 128 }).encoders.values().next().value!;
      },
      { log: o.log },
    );
  } finally {
    m.model.dispose();
  }
}

/** train.json: every run replayed from the golden weights on the active backend (see ./train.ts). */
async function checkTrainWithData(o: GoldenSuiteOptions): Promise<ParityCheck[]> {
  if (!o.dataDir) throw new InputError('the train suite reads training data: pass --data <dir> or set ANGLE_DATA_DIR');
  return checkTrainGolden(o.goldenDir, o.dataDir, { log: o.log });
}
