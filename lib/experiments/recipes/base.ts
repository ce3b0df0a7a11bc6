/**
 * What every recipe starts from: the defaults of Hugging Face's Trainer, which AnglE's `fit`,
 * SimCSE's and SimACE's training scripts and PromptEOL's `ft_llm.py` all train through (transformers
 * `TrainingArguments`: linear decay to 0 after a linear warmup from 0, weight decay 0, a fresh
 * shuffle each epoch; its warmup_steps 0 is the trainer's own default here, so a recipe may give
 * its warmup as a fraction instead), each value with that source, and the source lines the paper files
 * share. A recipe spreads these first and sets what its paper or code says over them.
 */
import type { TrainerConfig } from '../../train/trainer.js';

/** Where the values of recipes come from (one line each, shown in notebooks and --help). */
export const SOURCES = {
  hfTrainer: "HF Trainer's defaults, which the authors' training scripts use (linear schedule, warmup from 0, weight decay 0)",
  ours: 'ours (the papers and the code are silent)',
  resumable: (steps: number) => `ours (the papers and the code are silent): resumable every ${steps} steps`,
} as const;

/** The part of a trainer configuration HF's Trainer decides unless told otherwise. */
export type HfTrainerDefaults = Required<Pick<TrainerConfig, 'schedule' | 'warmupStart' | 'weightDecay' | 'shuffle'>>;

/** HF Trainer's defaults (see the file comment). */
export const HF_TRAINER: { config: HfTrainerDefaults; sources: Record<keyof HfTrainerDefaults, string> } = {
  config: { schedule: 'linear', warmupStart: 'zero', weightDecay: 0, shuffle: true },
  sources: {
    schedule: SOURCES.hfTrainer,
    warmupStart: SOURCES.hfTrainer,
    weightDecay: SOURCES.hfTrainer,
    shuffle: "HF Trainer's default (a random sampler, reshuffled each epoch)",
  },
};

/**
 * A recipe's configuration and sources over HF Trainer's defaults: `config` and `sources` win key by
 * key, and every default a recipe does not restate keeps HF's source.
 */
export function overHfTrainer(config: Omit<TrainerConfig, keyof HfTrainerDefaults> & Partial<HfTrainerDefaults>, sources: Record<string, string>): { config: TrainerConfig; sources: Record<string, string> } {
  return { config: { ...HF_TRAINER.config, ...config }, sources: { ...HF_TRAINER.sources, ...sources } };
}
