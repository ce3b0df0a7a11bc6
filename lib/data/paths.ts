import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { envConfig } from '../config.js';
import { InputError, UnknownNameError } from '../util/errors.js';
import { datasetEntry, type DatasetId } from './registry.js';

/**
 * The data root: the argument, else ANGLE_DATA_DIR. lib/ never bakes a path in, so with
 * neither there is nothing to guess and we say what to do.
 */
export function resolveDataDir(dataDir?: string): string {
  const dir = dataDir?.trim() || envConfig().dataDir;
  if (!dir) {
    throw new InputError(
      'no data directory: pass dataDir or set ANGLE_DATA_DIR to a folder laid out as in lib/data/registry.ts ' +
        '(sts/STS12-en-test/..., stsb/sts-test.csv, sick/SICK_test_annotated.txt, mrpc/, qnli/, flickr30k/), ' +
        'or fetch the data sets into the Hugging Face cache with `npm run data -- download <id>`',
    );
  }
  const abs = resolve(dir);
  if (!existsSync(abs) || !statSync(abs).isDirectory()) {
    throw new InputError(`data directory does not exist or is not a directory`, { file: abs });
  }
  return abs;
}

/** The data root when one is given or configured (checked), else undefined: then only the Hub cache is looked at. */
export function optionalDataDir(dataDir?: string): string | undefined {
  return dataDir?.trim() || envConfig().dataDir ? resolveDataDir(dataDir) : undefined;
}

/** Absolute path of a data set's folder under the data root. */
export function datasetDir(id: DatasetId, dataDir?: string): string {
  return join(resolveDataDir(dataDir), datasetEntry(id).localDir);
}

/**
 * Absolute path of one of a data set's files under the data root (default: the split's first
 * local file); a missing file is an InputError naming the data set, the split and where it was
 * looked for.
 */
export function datasetFile(id: DatasetId, split: string, dataDir?: string, fileName?: string): string {
  const entry = datasetEntry(id);
  const s = entry.splits[split];
  if (s === undefined && fileName === undefined) {
    throw new UnknownNameError(`split of ${id}`, split, Object.keys(entry.splits));
  }
  const name = fileName ?? s.local[0];
  const file = join(datasetDir(id, dataDir), name);
  if (!existsSync(file)) {
    throw new InputError(
      `${id} ${split}: missing file ${name} (expected under <dataDir>/${entry.localDir}/; ` +
        `source: Hub dataset ${entry.hub.repo}; get it with \`npm run data -- download ${id}\`)`,
      { file },
    );
  }
  return file;
}
