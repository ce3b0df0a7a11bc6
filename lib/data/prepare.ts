/**
 * Turning downloaded Hub files into the folder a loader reads (see cache.ts for where):
 *
 * - senteval.tar is extracted, and the folder holding STS/ (SentEval's data/downstream) becomes
 *   the archive's root, whatever prefix the archive uses;
 * - a parquet split becomes `<split>.jsonl`, one `{"text1","text2","label","idx"}` per row, the
 *   label mapped to 1 = paraphrase / duplicate / entailment (GLUE QNLI stores 0 for entailment);
 * - Flickr30k's annotation csv becomes `test_caps.txt` / `dev_caps.txt`, the 5 captions of each
 *   image of the split on consecutive lines, in csv order.
 *
 * Each output is written under a temporary name and renamed into place, so a folder or file that
 * exists is complete, and a failure leaves nothing half-written.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { writeFileAtomic } from '../util/atomic-write.js';
import { InputError } from '../util/errors.js';
import { csvTable } from './csv.js';
import { readParquetColumns } from './parquet.js';
import type { ParquetColumns } from './registry.js';
import { extractTar, type TarExtractResult } from './tar.js';
import { readText } from './text.js';

function tempDirFor(path: string): string {
  return `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
}

/** The folder at most `depth` levels below `dir` that holds a folder named `marker` (breadth first). */
function findRootWith(dir: string, marker: string, depth: number): string | undefined {
  let level = [dir];
  for (let d = 0; d <= depth; d++) {
    for (const p of level) if (existsSync(join(p, marker)) && statSync(join(p, marker)).isDirectory()) return p;
    level = level.flatMap((p) =>
      readdirSync(p, { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => join(p, e.name)),
    );
  }
  return undefined;
}

/**
 * Extracts `tarFile` so that `finalDir` is the folder that contains `marker` (SentEval: "STS").
 * Returns what was extracted; an archive without the marker is an error listing its top level.
 */
export async function extractArchiveRoot(tarFile: string, finalDir: string, marker: string): Promise<TarExtractResult> {
  await mkdir(dirname(finalDir), { recursive: true });
  const tmp = tempDirFor(finalDir);
  try {
    const result = await extractTar(tarFile, tmp);
    const root = findRootWith(tmp, marker, 3);
    if (!root) {
      const top = existsSync(tmp) ? readdirSync(tmp).join(', ') : '';
      throw new InputError(`archive layout not recognised: no folder '${marker}/' within 3 levels (top level: ${top || 'empty'})`, { file: tarFile });
    }
    try {
      await rename(root, finalDir);
    } catch (e) {
      // Another process finished the same extraction first: its complete copy is as good.
      if (!existsSync(finalDir)) throw e;
    }
    return result;
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

/** Maps a parquet label to ours (1 = paraphrase / duplicate / entailment). */
function ourLabel(raw: unknown, positive: 0 | 1, file: string, row: number): 0 | 1 {
  const v = typeof raw === 'bigint' ? Number(raw) : raw;
  if (v !== 0 && v !== 1) {
    throw new InputError(
      `row ${row}: label ${String(raw)} is not 0 or 1` + (v === -1 ? ' (-1 marks an unlabelled GLUE test split)' : ''),
      { file },
    );
  }
  return v === positive ? 1 : 0;
}

/** Converts one parquet split to JSON lines {text1, text2, label, idx}; returns the row count. */
export async function parquetToPairsJsonl(parquetFile: string, cols: ParquetColumns, outFile: string): Promise<number> {
  const { rows } = await readParquetColumns(parquetFile, [cols.text1, cols.text2, cols.label]);
  const lines = rows.map((r, i) => {
    const t1 = r[cols.text1];
    const t2 = r[cols.text2];
    if (typeof t1 !== 'string' || typeof t2 !== 'string') {
      throw new InputError(`row ${i}: ${cols.text1} and ${cols.text2} must be strings, found ${typeof t1} and ${typeof t2}`, { file: parquetFile });
    }
    return JSON.stringify({ text1: t1, text2: t2, label: ourLabel(r[cols.label], cols.positive, parquetFile, i), idx: i });
  });
  if (lines.length === 0) throw new InputError(`no rows: expected a non-empty split`, { file: parquetFile });
  await writeFileAtomic(outFile, lines.join('\n') + '\n');
  return lines.length;
}

/** The Flickr30k csv's split names for our split names. */
const FLICKR_SPLITS: Record<string, string> = { test: 'test', dev: 'val' };

/**
 * Writes `<split>_caps.txt` for each of `splits` from flickr_annotations_30k.csv (columns raw =
 * JSON list of the image's captions, split = train/val/test). Returns images per split.
 */
export async function flickrCsvToCaptions(csvFile: string, outDir: string, splits: readonly string[]): Promise<Record<string, number>> {
  const what = 'a csv with columns raw (JSON list of captions), sentids, split, filename, img_id';
  const { rows } = csvTable(readText(csvFile, what), csvFile, ['raw', 'split'], what);
  const out: Record<string, number> = {};
  for (const split of splits) {
    const theirs = FLICKR_SPLITS[split];
    if (!theirs) throw new InputError(`Flickr30k has no split '${split}' in the Hub csv: expected test or dev`);
    const captions: string[] = [];
    let images = 0;
    for (const r of rows) {
      if (r.values.split !== theirs) continue;
      const where = { file: csvFile, line: r.line };
      let raw: unknown;
      try {
        raw = JSON.parse(r.values.raw);
      } catch (e) {
        throw new InputError(`column raw is not a JSON list of captions: ${(e as Error).message}`, where);
      }
      if (!Array.isArray(raw) || raw.length !== 5 || !raw.every((c) => typeof c === 'string' && c.trim() !== '' && !/[\r\n]/.test(c))) {
        throw new InputError(`column raw must list exactly 5 non-empty one-line captions, found ${JSON.stringify(raw).slice(0, 200)}`, where);
      }
      captions.push(...raw.map((c: string) => c.trim()));
      images++;
    }
    if (images === 0) throw new InputError(`no rows with split '${theirs}'`, { file: csvFile });
    await writeFileAtomic(join(outDir, `${split}_caps.txt`), captions.join('\n') + '\n');
    out[split] = images;
  }
  return out;
}
