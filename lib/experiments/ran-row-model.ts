/**
 * The model AnglE Table 3's AnglE-RAN row trains from, by preset (the row's own model, beside the
 * notebook's MODEL, which is a BERT):
 *
 * | preset / setting        | model                                                                   |
 * |-------------------------|-------------------------------------------------------------------------|
 * | ANGLE_RAN_MODEL set     | that folder (an unzipped RAN_base, or any RanNet folder)                |
 * | smoke                   | the tiny random RanNet of a RAN golden set (a <shared>/golden/ran-… set's model/): a STAND-IN that reproduces nothing |
 * | rehearsal               | RAN_base by id: the rehearsal builds it from its assumed config (lib/models/ran/ran-base.ts) |
 * | paper (or none)         | <shared>/models/RAN_base when it is there; else the row cannot run, and says where to get it |
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { locateSharedDir } from '../config.js';
import { RAN_BASE_CARD, RAN_BASE_ID, ranBaseDir } from '../models/ran/ran-base.js';

/** The model of the AnglE-RAN row, or why the row cannot run here. */
export type RanRowModel = { model: string; standIn?: string } | { unavailable: string };

/** The model folder of the first RAN golden set (golden.json format rannet-golden-v1) under `goldenRoot`. */
export function ranGoldenModelDir(goldenRoot: string): string | undefined {
  let names: string[];
  try {
    names = readdirSync(goldenRoot).sort();
  } catch {
    return undefined;
  }
  for (const name of names) {
    const gj = join(goldenRoot, name, 'golden.json');
    if (!existsSync(gj) || !existsSync(join(goldenRoot, name, 'model', 'config.json'))) continue;
    try {
      if ((JSON.parse(readFileSync(gj, 'utf8')) as { format?: unknown }).format === 'rannet-golden-v1') return join(goldenRoot, name, 'model');
    } catch {
      // not a set of this kind
    }
  }
  return undefined;
}

export function ranRowModel(preset: string | undefined = process.env.ANGLE_PRESET, env: NodeJS.ProcessEnv = process.env): RanRowModel {
  if (env.ANGLE_RAN_MODEL) return { model: env.ANGLE_RAN_MODEL };
  const shared = locateSharedDir(undefined, env)?.path;
  if (preset === 'smoke') {
    const dir = shared ? ranGoldenModelDir(join(shared, 'golden')) : undefined;
    if (!dir) return { unavailable: 'smoke: no RAN golden set (golden/ran-*/model) in the shared folder to stand in for RAN_base' };
    return { model: dir, standIn: `the tiny random RanNet of ${dir} stands in for RAN_base: it reproduces nothing` };
  }
  if (preset === 'rehearsal') return { model: RAN_BASE_ID };
  const dir = ranBaseDir(env, shared);
  if (!dir) return { unavailable: `RAN_base is not on this machine: ${RAN_BASE_CARD.download}; ${RAN_BASE_CARD.install}` };
  return { model: dir };
}
