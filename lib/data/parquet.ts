/**
 * Reading the rows of a parquet file (the Hub's GLUE and GitHub Issues splits) with hyparquet, a
 * maintained pure-JS reader. hyparquet decodes UNCOMPRESSED and SNAPPY pages itself; the Hub's
 * `datasets`-written files use snappy (pyarrow's default). A file compressed otherwise (ZSTD,
 * GZIP, ...) is refused up front with the codec's name, not half-read. INT64 columns come back
 * as bigint.
 */
import { readFile } from 'node:fs/promises';
import { parquetMetadata, parquetReadObjects, type FileMetaData } from 'hyparquet';
import { InputError, UnavailableError } from '../util/errors.js';

const READABLE_CODECS = new Set(['UNCOMPRESSED', 'SNAPPY']);

export interface ParquetTable {
  rows: Record<string, unknown>[];
  /** The file's top-level column names. */
  columns: string[];
}

function topLevelColumns(meta: FileMetaData): string[] {
  // schema[0] is the root; its num_children direct children follow, each followed by its own subtree.
  const names: string[] = [];
  let i = 1;
  const skip = (): void => {
    const el = meta.schema[i++];
    for (let k = 0; k < (el.num_children ?? 0); k++) skip();
  };
  for (let k = 0; k < (meta.schema[0].num_children ?? 0); k++) {
    names.push(meta.schema[i].name);
    skip();
  }
  return names;
}

/** Reads the named columns of every row; a missing column or an unreadable codec is a clear error. */
export async function readParquetColumns(file: string, columns: readonly string[]): Promise<ParquetTable> {
  const buf = await readFile(file);
  const magic = (o: number) => buf.subarray(o, o + 4).toString('latin1');
  if (buf.length < 12 || magic(0) !== 'PAR1' || magic(buf.length - 4) !== 'PAR1') {
    throw new InputError(`not a parquet file (no PAR1 magic at both ends; ${buf.length} bytes): expected a parquet split`, { file });
  }
  const ab = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength) as ArrayBuffer;
  let meta: FileMetaData;
  try {
    meta = parquetMetadata(ab);
  } catch (e) {
    throw new InputError(`corrupt parquet footer: ${(e as Error).message}`, { file });
  }
  const have = topLevelColumns(meta);
  for (const c of columns) {
    if (!have.includes(c)) throw new InputError(`parquet file has no column '${c}' (missing column): found ${have.join(', ')}`, { file });
  }
  for (const rg of meta.row_groups) {
    for (const cc of rg.columns) {
      const codec = cc.meta_data?.codec;
      const col = cc.meta_data?.path_in_schema[0];
      if (codec && col && columns.includes(col) && !READABLE_CODECS.has(codec)) {
        throw new UnavailableError(
          `${file}: column '${col}' is ${codec}-compressed; hyparquet reads UNCOMPRESSED and SNAPPY pages only ` +
            '(other codecs need the hyparquet-compressors package, which this project does not install)',
        );
      }
    }
  }
  try {
    const rows = (await parquetReadObjects({ file: ab, metadata: meta, columns: [...columns] })) as Record<string, unknown>[];
    return { rows, columns: have };
  } catch (e) {
    throw new InputError(`cannot decode parquet data: ${(e as Error).message}`, { file });
  }
}
