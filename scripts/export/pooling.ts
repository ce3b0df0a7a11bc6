/**
 * The pooling `npm run export` writes into a sentence-transformers folder, and where it came from:
 *
 * 1. `--pooling`, when given;
 * 2. else the model's own pooling module (lib/embed/pooling-module.ts): a run's best/ checkpoint
 *    carries the pooling it was trained with as modules.json + 1_Pooling/... (lib/train/best-model.ts),
 *    and a sentence-transformers folder given with --model carries its own;
 * 3. else, for a run whose best/ predates those modules, the pooling its record names;
 * 4. else the architecture's default (its registry entry's `defaultPooling`: BERT cls).
 *
 * A folder whose modules are none of our poolings is refused with the reason (name one with
 * --pooling), as is a pooling no module pipeline computes (the batch-dependent ones, cls_pooler).
 */
import { poolingModuleOf } from '../../lib/embed/pooling-module.js';
import { parsePooling, type Pooling } from '../../lib/embed/pooling.js';
import { sentenceTransformerSteps } from '../../lib/embed/sentence-transformer-export.js';
import type { LoadedModel } from '../../lib/models/types.js';
import { InputError } from '../../lib/util/errors.js';

export interface ExportPooling {
  pooling: Pooling;
  /** Where it came from, for the command's output. */
  from: string;
}

/** `p` parsed and checked to be one a module pipeline computes (the reason in the error otherwise). */
export function exportablePooling(p: string): Pooling {
  const pooling = parsePooling(p);
  sentenceTransformerSteps(pooling, 2, 2); // refuses, with the reason, what no module pipeline computes
  return pooling;
}

/** The pooling to export `m` with (see the file comment); `recorded` is a run record's config.pooling. */
export function exportPooling(m: Pick<LoadedModel, 'model' | 'sentenceEmbedding' | 'dir'>, given?: Pooling, recorded?: unknown): ExportPooling {
  if (given !== undefined) return { pooling: given, from: '--pooling' };
  const module = poolingModuleOf(m);
  if (module.from === 'sentence-transformers folder') {
    if (!module.pooling) throw new InputError("the model folder's sentence-transformers modules are none of our poolings: name the pooling to export with --pooling", { file: m.dir });
    return { pooling: exportablePooling(module.pooling), from: "the model's pooling module (its modules.json)" };
  }
  if (typeof recorded === 'string') return { pooling: exportablePooling(recorded), from: "the run's recorded pooling (its best/ has no pooling module)" };
  return { pooling: exportablePooling(module.pooling!), from: `the ${m.model.architecture} architecture's default` };
}
