/**
 * The models an evaluation notebook (05 Flickr30k, 06 geometry, 07 SentEval transfer) is pointed
 * at: a parameter cell lists them as `ModelEntry`s — the preset's model, a run's best/ folder, a
 * sentence-transformers folder, a Hub id of a released checkpoint — and `openModelEntry` loads one
 * into a sentence encoder, or says in one line why it cannot. A Hub id of the released-checkpoint
 * registry (lib/models/released.ts) loads the way the registry says (safetensors from a pull-request
 * branch, a tokenizer from another repository; lib/models/load-released.ts) and embeds with the
 * authors' pooling unless the entry names one; a Hub id the Hub cannot serve here is
 * "needs the Hub" (the row is marked, the notebook goes on), a path that does not exist names the
 * id and where it looked. One model is open at a time (`withModelEntry` disposes it), since a
 * notebook may evaluate several BERT-base checkpoints in a row.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { resolveResultsDir } from '../config.js';
import { PooledSentenceEncoder } from '../embed/encoder.js';
import { poolingModuleOf } from '../embed/pooling-module.js';
import { parsePooling } from '../embed/pooling.js';
import type { SentenceEncoder } from '../embed/types.js';
import { isHubId } from '../hub/index.js';
import { loadModel } from '../models/auto.js';
import { loadReleasedModel } from '../models/load-released.js';
import { RELEASED_CHECKPOINTS, type ReleasedCheckpoint } from '../models/released.js';
import type { LoadedModel } from '../models/types.js';
import { InputError, UnavailableError } from '../util/errors.js';
import type { SimpleTable } from '../util/table.js';
import { rehearsalLoadedModel } from './rehearsal/models.js';

/** One model to evaluate, as a notebook's parameter cell writes it. */
export interface ModelEntry {
  /** The row label in the notebook's tables. */
  label: string;
  /** A Hub id or a local directory (model folder, sentence-transformers folder, a run's best/). */
  model: string;
  /** Pooling strategy; default the released registry's, else the folder's sentence-transformers pipeline, else cls. */
  pooling?: string;
  /** Token limit when embedding (default the model's maximum). */
  maxLength?: number;
  /** The paper row whose number this model's goes beside (none: shown off the table). */
  paperRow?: string;
  /** Why these settings, for the reader (e.g. which pooling the model's authors evaluate with). */
  note?: string;
}

/** An entry opened: the model and its encoder, or why it could not be opened. */
export interface OpenedModel {
  entry: ModelEntry;
  loaded?: LoadedModel;
  encoder?: SentenceEncoder;
  /** What decides the embeddings (pooling, max length, where the model came from): a run's config. */
  config?: Record<string, unknown>;
  /** One line: "needs the Hub: …" or "not found: …". */
  unavailable?: string;
  /** The loader's own message (which URL, which cache), for a log. */
  detail?: string;
}

/** The first line of an error message (Hub errors carry advice on later lines). */
function firstLine(e: Error): string {
  return e.message.split('\n')[0]!;
}

export interface OpenModelOptions {
  /** Where released checkpoints' files are linked into model folders (default <results>/released-models). */
  workDir?: string;
}

/** Loads an entry's model and builds its encoder; never throws for a missing or unreachable model. */
export async function openModelEntry(entry: ModelEntry, opts: OpenModelOptions = {}): Promise<OpenedModel> {
  if (!existsSync(entry.model) && !isHubId(entry.model)) {
    return { entry, unavailable: `not found: '${entry.model}' is not a directory (looked at ${resolve(entry.model)}) and not a Hub id (org/name)` };
  }
  const released: ReleasedCheckpoint | undefined = existsSync(entry.model) ? undefined : RELEASED_CHECKPOINTS.find((c) => c.id === entry.model);
  let loaded: LoadedModel;
  try {
    loaded = released
      ? await loadReleasedModel(released, { workDir: opts.workDir ?? join(resolveResultsDir(), 'released-models') })
      : await loadModel(entry.model);
  } catch (e) {
    if (e instanceof UnavailableError) {
      return { entry, unavailable: `needs the Hub: ${entry.model} is not in the Hugging Face cache here and could not be downloaded`, detail: firstLine(e) };
    }
    if (e instanceof InputError) return { entry, unavailable: `not found or not a model: ${entry.model}: ${firstLine(e)}`, detail: firstLine(e) };
    throw e;
  }
  const own = entry.pooling ?? released?.pooling;
  // The model's pooling module where the entry names none: a folder's own modules, else its architecture's default.
  const pooling = own !== undefined ? parsePooling(own) : poolingModuleOf(loaded).applies;
  const encoder = new PooledSentenceEncoder(loaded, {
    ...(pooling !== 'sentence-transformers' ? { pooling } : {}),
    ...(entry.maxLength !== undefined ? { maxLength: entry.maxLength } : {}),
  });
  const config = { model: entry.model, pooling, maxLength: encoder.maxLength, source: loaded.source, ...(loaded.commit ? { commit: loaded.commit } : {}) };
  return { entry, loaded, encoder, config };
}

/**
 * Loads a model, or says in one line why it cannot be loaded here (not in the Hub cache and no Hub,
 * or not a model folder), instead of stopping the notebook: the rows that need it are marked.
 * Under the rehearsal preset (`preset`, the caller's: a plan's or the notebook's settings) the
 * papers' models load at their real sizes with random weights where they cannot be loaded.
 */
export async function loadModelOrExplain(id: string, o: { preset?: string } = {}): Promise<{ loaded: LoadedModel; why?: undefined } | { loaded?: undefined; why: string }> {
  try {
    return { loaded: o.preset === 'rehearsal' ? await rehearsalLoadedModel(id) : await loadModel(id) };
  } catch (e) {
    if (!(e instanceof InputError) && !(e instanceof UnavailableError)) throw e;
    return { why: `${id} is not on this machine: ${firstLine(e as Error)}` };
  }
}

/** Opens the entry, runs `fn` on it (also when it is unavailable) and disposes the model after. */
export async function withModelEntry<T>(entry: ModelEntry, fn: (m: OpenedModel) => Promise<T>, opts: OpenModelOptions = {}): Promise<T> {
  const m = await openModelEntry(entry, opts);
  try {
    return await fn(m);
  } finally {
    m.loaded?.model.dispose();
  }
}

/** The parameter cell's models as a table: label, model, pooling, paper row, note. */
export function modelEntriesTable(entries: readonly ModelEntry[], caption = 'Models to evaluate'): SimpleTable {
  return {
    caption,
    columns: ['label', 'model', 'pooling', 'paper row', 'note'],
    rows: entries.map((e) => [
      e.label,
      e.model,
      e.pooling ?? RELEASED_CHECKPOINTS.find((c) => c.id === e.model)?.pooling ?? "(the folder's own, else its architecture's)",
      e.paperRow ?? '(off the table)',
      e.note ?? '',
    ]),
  };
}
