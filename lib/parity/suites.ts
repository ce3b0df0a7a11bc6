/**
 * The golden parity suites `npm run parity` runs, and which kind of golden set each applies to.
 *
 * | set kind   | recognised by                              | suites                          |
 * |------------|--------------------------------------------|---------------------------------|
 * | `encoder`  | forward.json (PyTorch + HF transformers)   | forward, losses, eval, train    |
 * | `decoder`  | golden.json with `prompts` (llama2.c), or format opt-golden-v1 (HF OPT) | decoder    |
 * | `transfer` | golden.json, format senteval-transfer-golden/1 (SentEval) | transfer           |
 * | `ran`      | golden.json, format rannet-golden-v1 (RanNet, a Keras transcription) | ran     |
 * | `angle-emb-losses` | golden.json, format angle-emb-losses-golden-v1 (angle_emb 0.6.1's training code) | losses |
 *
 * Each suite reads its own files from the set; within a set of its kind, a suite whose file is
 * absent is reported as a failed check, so a partial golden set cannot pass by omission. The
 * forward and eval suites embed on `engine` (default tfjs, the reference; `onnx` checks ONNX
 * Runtime over the exported graph).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sharedPoolingEncoders } from '../embed/encoder.js';
import type { InferenceEngineChoice } from '../embed/engines/choose.js';
import type { SentenceEncoder } from '../embed/types.js';
import { loadModel } from '../models/auto.js';
import { InputError } from '../util/errors.js';
import type { ParityCheck } from './check.js';
import { checkDecoderGolden } from './decoder.js';
import { checkOptGolden, isOptGoldenHead } from './opt-decoder.js';
import { checkRanGolden, isRanGoldenHead } from './ran.js';
import { checkEvalGolden } from './eval.js';
import { checkForwardGolden } from './forward.js';
import { checkLossesGolden } from './losses.js';
import { checkAngleEmbLossesGolden, isAngleEmbLossesHead } from './angle-emb-losses.js';
import { checkTrainGolden, type ReplayPrecision } from './train.js';
import { checkTransferGolden } from './transfer.js';

export const GOLDEN_SET_KINDS = ['encoder', 'decoder', 'transfer', 'angle-emb-losses', 'ran'] as const;
export type GoldenSetKind = (typeof GOLDEN_SET_KINDS)[number];

export const GOLDEN_SUITE_NAMES = ['forward', 'losses', 'eval', 'train', 'decoder', 'transfer', 'ran'] as const;
export type GoldenSuiteName = (typeof GOLDEN_SUITE_NAMES)[number];

/** The suites of each kind of set, in the order they run. */
export const SUITES_OF_KIND: Record<GoldenSetKind, readonly GoldenSuiteName[]> = {
  encoder: ['forward', 'losses', 'eval', 'train'],
  decoder: ['decoder'],
  transfer: ['transfer'],
  ran: ['ran'],
  'angle-emb-losses': ['losses'],
};

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
  only?: readonly GoldenSuiteName[];
  /** Inference engine of the forward and eval suites (default tfjs, the reference). */
  engine?: InferenceEngineChoice;
  /** The train suite's matmul precision: fp32 (default, the golden tolerances) or bf16/fp16 (the 16-bit tolerance; cuBLASLt on cuda, emulated elsewhere). */
  trainPrecision?: ReplayPrecision;
}

/** The kind of golden set `dir` is, or undefined when it is none. */
export function goldenSetKind(dir: string): GoldenSetKind | undefined {
  if (existsSync(join(dir, 'forward.json'))) return 'encoder';
  const gj = join(dir, 'golden.json');
  if (!existsSync(gj)) return undefined;
  // The top-level keys tell the references apart.
  let head: Record<string, unknown>;
  try {
    head = JSON.parse(readFileSync(gj, 'utf8')) as Record<string, unknown>;
  } catch (e) {
    throw new InputError(`not valid JSON: ${(e as Error).message}`, { file: gj });
  }
  if (Array.isArray(head.prompts) || isOptGoldenHead(head)) return 'decoder';
  if (typeof head.format === 'string' && head.format.startsWith('senteval-transfer-golden/')) return 'transfer';
  if (isRanGoldenHead(head)) return 'ran';
  if (isAngleEmbLossesHead(head)) return 'angle-emb-losses';
  return undefined;
}

/** Whether a decoder set is of the OPT layout (else llama2.c's). */
function isOptGoldenSet(dir: string): boolean {
  return isOptGoldenHead(JSON.parse(readFileSync(join(dir, 'golden.json'), 'utf8')) as Record<string, unknown>);
}

function needsFile(goldenDir: string, file: string, name: string, run: () => Promise<ParityCheck[]>): () => Promise<ParityCheck[]> {
  return async () => (existsSync(join(goldenDir, file)) ? run() : [{ name, ok: false, detail: `${join(goldenDir, file)} is missing` }]);
}

/** The suites that apply to the set `o.goldenDir` (all of its kind, or those of them in `only`). */
export function goldenSuites(o: GoldenSuiteOptions): GoldenSuite[] {
  const kind = goldenSetKind(o.goldenDir);
  if (!kind) throw new InputError('not a golden set: no forward.json, and no golden.json of a known kind (decoder prompts, SentEval transfer)', { file: o.goldenDir });
  const all: Record<GoldenSuiteName, GoldenSuite> = {
    forward: { name: 'forward', run: needsFile(o.goldenDir, 'forward.safetensors', 'forward', () => checkForwardGolden(o.goldenDir, { engine: o.engine })) },
    // Two layouts: an encoder set's losses.json (bert-tiny), or a set of angle_emb 0.6.1's training code.
    losses:
      kind === 'angle-emb-losses'
        ? { name: 'losses', run: needsFile(o.goldenDir, 'golden.safetensors', 'losses', () => checkAngleEmbLossesGolden(o.goldenDir)) }
        : { name: 'losses', run: needsFile(o.goldenDir, 'losses.json', 'losses', () => checkLossesGolden(o.goldenDir)) },
    eval: { name: 'eval', run: needsFile(o.goldenDir, 'eval.json', 'eval', () => checkEvalWithGoldenModel(o)) },
    train: { name: 'train', run: needsFile(o.goldenDir, 'train.json', 'train', () => checkTrainWithData(o)) },
    decoder: { name: 'decoder', run: () => (isOptGoldenSet(o.goldenDir) ? checkOptGolden(o.goldenDir) : checkDecoderGolden(o.goldenDir)) },
    transfer: { name: 'transfer', run: () => checkTransferWithData(o) },
    ran: { name: 'ran', run: needsFile(o.goldenDir, 'golden.safetensors', 'ran', () => checkRanGolden(o.goldenDir)) },
  };
  return SUITES_OF_KIND[kind].filter((n) => !o.only || o.only.includes(n)).map((n) => all[n]);
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
          set = sharedPoolingEncoders(m, ['cls', 'avg'], { maxLength, batchSize: 128, engine: o.engine ?? 'tfjs' }).encoders as Map<string, SentenceEncoder>;
          shared.set(maxLength, set);
        }
        const enc = set.get(pooling);
        if (enc) return enc;
        return sharedPoolingEncoders(m, [pooling], { maxLength, batchSize: 128, engine: o.engine ?? 'tfjs' }).encoders.values().next().value!;
      },
      { log: o.log },
    );
  } finally {
    m.model.dispose();
  }
}

/** The SentEval transfer tasks (golden.json) on the data root's senteval-transfer/ (see ./transfer.ts). */
async function checkTransferWithData(o: GoldenSuiteOptions): Promise<ParityCheck[]> {
  if (!o.dataDir) throw new InputError('the transfer suite reads the SentEval task files: pass --data <dir> or set ANGLE_DATA_DIR');
  return checkTransferGolden(o.goldenDir, o.dataDir, { log: o.log });
}

/** train.json: every run replayed from the golden weights on the active backend (see ./train.ts). */
async function checkTrainWithData(o: GoldenSuiteOptions): Promise<ParityCheck[]> {
  if (!o.dataDir) throw new InputError('the train suite reads training data: pass --data <dir> or set ANGLE_DATA_DIR');
  return checkTrainGolden(o.goldenDir, o.dataDir, { log: o.log, ...(o.trainPrecision ? { precision: o.trainPrecision } : {}) });
}
