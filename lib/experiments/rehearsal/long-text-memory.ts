/**
 * Long texts are RAN's point (AnglE §4: "AnglE-RAN outperforms AnglE-BERT" on GitHub Issues): the
 * training memory of AnglE-RAN's RAN_base beside AnglE-BERT's bert-base-uncased at 512 and 2,048
 * tokens per text, each one AnglE optimiser step of the Table 3 GitHub Issues recipe (batch 32
 * pairs, every text at the length), rehearsed on the shape-only backend that mirrors cuda and
 * projected onto one H100 (./train.ts, ./projection.ts) — projections, not measurements on a GPU.
 *
 * RAN attends within windows of 256 tokens plus one cell, so its attention memory grows with the
 * number of windows (linearly in the length); BERT's [T, T] scores grow quadratically. BERT-base
 * has 512 positions: its 2,048-token row is a hypothetical BERT with 2,048 learned positions
 * (random, as every rehearsal model), labelled so. RAN_base's shapes are the assumed ones
 * (lib/models/ran/ran-base.ts) unless ANGLE_RAN_MODEL names a real folder.
 */
import { KNOWN_CONFIGS, parameterCountOfConfig } from '../../models/model-from-config.js';
import { RAN_BASE_ID } from '../../models/ran/ran-base.js';
import type { SimpleTable } from '../../util/table.js';
import { angleBert, angleRan } from '../recipes/angle.js';
import type { Recipe } from '../recipes/recipe.js';
import { h100Calibration } from './calibration.js';
import { rehearsalModel, rehearsalTokenizer, type RehearsalModelSpec } from './models.js';
import type { RehearsalRow } from './summary.js';
import { rehearseTraining } from './train.js';

export const LONG_TEXT_LENGTHS = [512, 2048] as const;

/** BERT-base's config with `positions` learned positions (its checkpoint has 512). */
function bertWithPositions(positions: number): Readonly<Record<string, unknown>> {
  return { ...KNOWN_CONFIGS['google-bert/bert-base-uncased'], max_position_embeddings: Math.max(512, positions) };
}

async function bertSpec(positions: number): Promise<RehearsalModelSpec> {
  const config = bertWithPositions(positions);
  const { tokenizer, note } = rehearsalTokenizer(config);
  const hypothetical = positions > 512 ? `, HYPOTHETICAL ${positions} learned positions (the checkpoint has 512)` : '';
  return { id: 'google-bert/bert-base-uncased', config, tokenizer, parameters: parameterCountOfConfig(config), shapeOnly: false, instantiated: `random bert config${hypothetical}, ${note}` };
}

/** The recipe at `length` tokens per text (max length only; everything else the Table 3 GitHub Issues recipe's). */
function atLength(r: Recipe, length: number): Recipe {
  return { ...r, config: { ...r.config, maxLength: length } };
}

/**
 * One rehearsed AnglE step per (model, length): RAN_base (AnglE-RAN's GitHub Issues recipe) and
 * BERT-base (AnglE-BERT's), at each of `lengths`.
 */
export async function rehearseLongTextMemory(o: { backend: string; lengths?: readonly number[]; notebook?: string }): Promise<RehearsalRow[]> {
  const calibration = (await h100Calibration()).ratio;
  const notebook = o.notebook ?? '02-non-transfer-sts';
  const ran = await rehearsalModel(RAN_BASE_ID);
  const rows: RehearsalRow[] = [];
  for (const length of o.lengths ?? LONG_TEXT_LENGTHS) {
    const bert = await bertSpec(length);
    for (const [spec, recipe] of [
      [ran, angleRan('gis')],
      [bert, angleBert('gis')],
    ] as const) {
      rows.push(
        await rehearseTraining({ notebook, run: `long-text memory: ${recipe.name} at ${length} tokens`, recipe: atLength(recipe, length), spec, calibration, backend: o.backend, realStepSeconds: 0 }),
      );
    }
  }
  return rows;
}

/** The rows side by side: per length, RAN_base's projected H100 peak beside BERT-base's. */
export function longTextMemoryTable(rows: readonly RehearsalRow[]): SimpleTable {
  const gb = (b: number) => (b / 1e9).toFixed(1);
  const lengths = [...new Set(rows.map((r) => r.length))].sort((a, b) => a - b);
  const of = (length: number, ran: boolean) => rows.find((r) => r.length === length && (r.model === RAN_BASE_ID) === ran);
  return {
    caption: "Training memory at long texts: one AnglE step (GitHub Issues recipe, 32 pairs, every text at the length), shape-only, projected onto one H100 (GB; projections, not GPU measurements)",
    columns: ['tokens per text', 'AnglE-RAN (RAN_base)', 'AnglE-BERT (bert-base-uncased)', 'RAN / BERT'],
    rows: lengths.map((length) => {
      const r = of(length, true);
      const b = of(length, false);
      const cell = (x: RehearsalRow | undefined) => (!x ? '—' : x.status === 'failed' ? `failed: ${x.why}` : `${gb(x.projectedPeakBytesH100)}${x.fits80GB ? '' : ' (does not fit 80 GB)'}`);
      const ratio = r && b && r.status !== 'failed' && b.status !== 'failed' && b.projectedPeakBytesH100 > 0 ? (r.projectedPeakBytesH100 / b.projectedPeakBytesH100).toFixed(2) : '—';
      return [String(length), cell(r), cell(b), ratio];
    }),
    notes: [
      'RAN_base: ' + (rows.find((r) => r.model === RAN_BASE_ID)?.instantiated ?? '?'),
      'BERT-base at more than 512 tokens: a hypothetical BERT with that many learned positions (the released one has 512).',
    ],
  };
}
