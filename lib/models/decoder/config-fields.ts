/**
 * Reading a decoder's config.json: the checks every decoder's parser starts with (a JSON object,
 * its `model_type` and `architectures` among those the decoder implements) and typed readers of
 * its fields whose errors name the key, what was expected and the file. ../llama/config.ts and
 * ../opt/config.ts read their fields through it and state only which keys they have and their
 * defaults.
 */
import { InputError, UnknownNameError } from '../../util/errors.js';

/** What a decoder implements: its name in messages, config.json model_types and `architectures` entries. */
export interface DecoderFamily {
  name: string;
  modelTypes: readonly string[];
  architectures: readonly string[];
}

export interface ConfigFields {
  /** The config object itself. */
  raw: Record<string, unknown>;
  /** Where errors point: the config file. */
  where: { file: string };
  /** A required integer > 0. */
  positiveInt(key: string): number;
  /** A finite number for which `ok` holds; `dflt` when absent or null. */
  number(key: string, dflt: number, ok: (v: number) => boolean, expected: string): number;
  /** true or false; `dflt` when absent or null. */
  bool(key: string, dflt: boolean): boolean;
  /** A probability in [0, 1); `dflt` when absent or null. */
  probability(key: string, dflt: number): number;
  /** A token id (integer >= 0), or null when the config says null; `dflt` when absent. */
  tokenId(key: string, dflt: number | null): number | null;
  /** A token id or a list of them (eos_token_id), [] when null; `dflt` when absent. */
  tokenIds(key: string, dflt: number[]): number[];
}

/** Checks `raw` is a config of `family` (an object, model_type, architectures) and returns its field readers. */
export function decoderConfigFields(raw: unknown, file: string, family: DecoderFamily): ConfigFields {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new InputError('expected a JSON object', { file });
  const c = raw as Record<string, unknown>;
  const where = { file };
  const modelType = c.model_type;
  if (typeof modelType !== 'string') throw new InputError(`'model_type' must be a string (one of ${family.modelTypes.join(', ')}), found ${JSON.stringify(modelType)}`, where);
  if (!family.modelTypes.includes(modelType)) throw new UnknownNameError('decoder model_type', modelType, family.modelTypes, where);
  if (c.architectures !== undefined && c.architectures !== null) {
    if (!Array.isArray(c.architectures)) throw new InputError(`'architectures' must be a list, found ${JSON.stringify(c.architectures)}`, where);
    for (const a of c.architectures) {
      if (typeof a !== 'string' || !family.architectures.includes(a)) throw new UnknownNameError(`${family.name} architecture`, String(a), family.architectures, where);
    }
  }
  return {
    raw: c,
    where,
    positiveInt(k) {
      const v = c[k];
      if (typeof v !== 'number' || !Number.isInteger(v) || v <= 0) throw new InputError(`'${k}' must be a positive integer, found ${JSON.stringify(v)}`, where);
      return v;
    },
    number(k, dflt, ok, expected) {
      const v = c[k];
      if (v === undefined || v === null) return dflt;
      if (typeof v !== 'number' || !Number.isFinite(v) || !ok(v)) throw new InputError(`'${k}' must be ${expected}, found ${JSON.stringify(v)}`, where);
      return v;
    },
    bool(k, dflt) {
      const v = c[k];
      if (v === undefined || v === null) return dflt;
      if (typeof v !== 'boolean') throw new InputError(`'${k}' must be true or false, found ${JSON.stringify(v)}`, where);
      return v;
    },
    probability(k, dflt) {
      const v = c[k];
      if (v === undefined || v === null) return dflt;
      if (typeof v !== 'number' || !(v >= 0 && v < 1)) throw new InputError(`'${k}' must be a probability in [0, 1), found ${JSON.stringify(v)}`, where);
      return v;
    },
    tokenId(k, dflt) {
      const v = c[k];
      if (v === undefined) return dflt;
      if (v === null) return null;
      if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) throw new InputError(`'${k}' must be a token id (integer >= 0) or null, found ${JSON.stringify(v)}`, where);
      return v;
    },
    tokenIds(k, dflt) {
      const v = c[k];
      if (v === undefined) return dflt;
      if (v === null) return [];
      if (Array.isArray(v) && v.every((x) => Number.isInteger(x) && x >= 0)) return v as number[];
      if (typeof v === 'number' && Number.isInteger(v) && v >= 0) return [v];
      throw new InputError(`'${k}' must be a token id, a list of them or null, found ${JSON.stringify(v)}`, where);
    },
  };
}
