/**
 * Espresso (ESE) recipes: angle_emb 0.6.1's `AngleESETrainer` (lib/losses/ese.ts) over AnglE's
 * triplet objective on SimCSE's NLI triplets (angle_emb dataset format C: query, positive, hard
 * negative), as angle_emb's Espresso example trains it.
 *
 * The angle tau. angle_emb 0.6.1's `angle_loss` function defaults tau to 1.0, its `AngleLoss` class
 * (what the trainer builds from `loss_kwargs`) to 20. The Espresso example passes `--angle_tau 20.0`
 * explicitly, so the recipe uses 20: the class's value, and the one the example was run with.
 *
 * | recipe         | source                                                                                  |
 * |----------------|-----------------------------------------------------------------------------------------|
 * | `espresso-nli` | README_ESE.md at SeanLee97/AnglE@c6eac38 (UAE-Large-V1 in the example; BERT-base here) |
 * | `espresso-nli-no-ese` | the same run without ESE: plain AnglE, whose truncated embeddings notebook 11 sets beside Espresso's |
 *
 * The compression width k. The example's 128 is an eighth of UAE-Large's 1024 and a sixth of
 * BERT-base's 768; the smoke preset's tiny BERT is 64 wide, where 128 cannot be (ESE refuses k above
 * the hidden size, as torch.svd_lowrank does), so the smoke preset trains k = 16
 * (ESPRESSO_SMOKE_COMPRESSION): a quarter of its width, small enough that the truncated widths
 * below and above k both exist on the grid. The smoke preset also trains 16 triplets a step (its
 * scale allows 32): notebook 11 runs in CI, and both of its rows keep the same batch.
 */
import { overHfTrainer, SOURCES } from './base.js';
import type { Recipe } from './recipe.js';

export const ESPRESSO_SOURCES = {
  readme:
    'AnglE README_ESE.md at SeanLee97/AnglE@c6eac38: --model_name_or_path WhereIsAI/UAE-Large-V1 --train_name_or_path SeanLee97/nli_for_simcse --ibn_w 10.0 --cosine_w 0. --angle_w 1.0 --angle_tau 20.0 --learning_rate 1e-6 --maxlen 75 --pooling_strategy cls --epochs 1 --batch_size 128 (4 GPUs) --warmup_steps 200 --gradient_accumulation_steps 4 --apply_ese 1 --ese_compression_size 128 --ese_kl_temperature 1.0',
  lossDefaults: 'angle_emb 0.6.1 AngleLoss defaults (angle.py:567-664): cln_w 1, cosine_tau 20, ibn_tau 20, angle pooling sum',
  angleTau: "--angle_tau 20.0 in the example: AngleLoss's class default (20), not the angle_loss function's (1.0)",
  pca: 'angle_emb 0.6.1 AngleESETrainer: apply_ese_pca defaults to True (the CLI does not expose it)',
} as const;

/** k of the smoke preset's tiny 64-wide BERT (see the file comment). */
export const ESPRESSO_SMOKE_COMPRESSION = 16;

/** Where a k (and a batch) other than the example's comes from. */
export interface EspressoWidth {
  compressionSize: number;
  /** Why this k (the recipe table shows it as its source). */
  why: string;
  /** Triplets per micro-batch instead of the example's 128, and why. */
  batch?: { size: number; why: string };
}

/** The smoke preset's k and batch, with their reasons (the file comment). */
export const ESPRESSO_SMOKE_WIDTH: EspressoWidth = {
  compressionSize: ESPRESSO_SMOKE_COMPRESSION,
  why: `smoke preset: the tiny golden BERT is 64 wide, below the example's k = 128 (ESE refuses k above the hidden size); k = ${ESPRESSO_SMOKE_COMPRESSION} is a quarter of its width (the example's 128 is an eighth of UAE-Large's 1024)`,
  batch: { size: 16, why: 'smoke preset: 16 triplets a step keep notebook 11 short enough for CI (numbers mean nothing at this scale)' },
};

/** The Espresso objective over AnglE's triplet form, with the weights given. */
function espressoObjective(ibn: number, compressionSize = 128) {
  return {
    name: 'ese' as const,
    compressionSize,
    klTemperature: 1,
    pca: true,
    loss: { preset: 'code' as const, weights: { cosine: 0, ibn, angle: 1, cln: 1 }, taus: { cosine: 20, ibn: 20, angle: 20 }, anglePooling: 'sum' as const },
  };
}

/** angle_emb's Espresso example (README_ESE.md) on BERT-base and SimCSE's NLI triplets; `width`: another k, with its reason. */
export function espressoNli(width?: EspressoWidth): Recipe {
  const k = width?.compressionSize ?? 128;
  const batchSize = width?.batch?.size ?? 128;
  const r: Recipe = {
    name: 'espresso-nli',
    title: `Espresso (ESE) on SimCSE's NLI triplets, angle_emb's Espresso example (ibn 10, angle 1 with τ 20, k ${k})`,
    task: 'nli',
    ...overHfTrainer(
      { objective: espressoObjective(10, k), pooling: 'cls', maxLength: 75, batchSize, gradAccumulation: 16, epochs: 1, lr: 1e-6, warmupSteps: 200, seed: 42, checkpointEvery: 50 },
      {
        objective: width ? `${ESPRESSO_SOURCES.readme}; compressionSize ${k}: ${width.why}` : ESPRESSO_SOURCES.readme,
        'objective.loss.weights': `${ESPRESSO_SOURCES.readme}; cln_w: ${ESPRESSO_SOURCES.lossDefaults}`,
        'objective.loss.taus': `${ESPRESSO_SOURCES.angleTau}; ${ESPRESSO_SOURCES.lossDefaults}`,
        'objective.pca': ESPRESSO_SOURCES.pca,
        pooling: ESPRESSO_SOURCES.readme,
        maxLength: ESPRESSO_SOURCES.readme,
        batchSize: width?.batch ? `${ESPRESSO_SOURCES.readme}: 128 triplets; ${width.batch.size} here: ${width.batch.why}` : `${ESPRESSO_SOURCES.readme}: in-batch negatives per device (128 triplets)`,
        gradAccumulation: `${ESPRESSO_SOURCES.readme}: 4 devices × 4 accumulation = 16 micro-batches, 2,048 triplets per step`,
        epochs: ESPRESSO_SOURCES.readme,
        lr: `${ESPRESSO_SOURCES.readme} (fine-tuning UAE-Large-V1, an already trained embedding model)`,
        warmupSteps: ESPRESSO_SOURCES.readme,
        seed: `${SOURCES.ours}: the example sets none (angle_trainer's default 42)`,
        checkpointEvery: SOURCES.resumable(50),
      },
    ),
    deviations: [
      'UAE-Large-V1 (a trained 335M embedding model) in the example; BERT-base here (no pretrained weights are downloaded in this project: the base model is what the row is given)',
      "fp16 mixed precision in the authors' run; float32 here",
      "PCA targets: torch.svd_lowrank draws from torch's global RNG; a seeded stream here (the algorithm is torch 1.13's, checked against the library's own targets by `npm run parity -- --only losses`)",
      ...(width ? [`compression width k = ${k}, not the example's 128: ${width.why}`] : []),
    ],
  };
  return r;
}

/**
 * The Espresso example's run without ESE: the same AnglE loss, data and schedule, trained on the
 * last layer at full width only. Its truncated embeddings (lower layers, leading widths) are what
 * Espresso is measured against.
 */
export function espressoNliWithoutEse(width?: EspressoWidth): Recipe {
  const ese = espressoNli(width);
  const { name: _n, compressionSize: _k, klTemperature: _t, pca: _p, ...rest } = ese.config.objective as ReturnType<typeof espressoObjective>;
  const sources: Record<string, string> = { ...ese.sources, objective: `${ESPRESSO_SOURCES.readme} without --apply_ese: the AnglE loss alone, on the last layer at full width` };
  delete sources['objective.pca'];
  return {
    ...ese,
    name: 'espresso-nli-no-ese',
    title: "AnglE without ESE on SimCSE's NLI triplets: the Espresso example's loss and schedule, last layer only (ibn 10, angle 1 with τ 20)",
    config: { ...ese.config, objective: { name: 'angle', ...rest } },
    sources,
    deviations: (ese.deviations ?? []).filter((d) => !d.startsWith('PCA targets') && !d.startsWith('compression width')),
  };
}
