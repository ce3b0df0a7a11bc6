/**
 * The papers' numbers (lib/paper): every numeric table of AnglE (three versions), PromptEOL and
 * SimACE as typed cells with the file they are printed in, lookups by name, and the recomputed
 * averages with the rows whose printed average disagrees.
 */
export {
  MARKER_SYMBOLS,
  SPREAD_SUFFIX,
  type PaperId,
  type PaperCellKey,
  type PaperNumber,
  type PaperNonNumber,
  type PaperRow,
  type PaperBlock,
  type PaperTable,
} from './types.js';
export { ANGLE_FILES, ANGLE_TABLES, FLICKR30K_TABLE } from './angle.js';
export { PROMPTEOL_FILE, PROMPTEOL_TABLES } from './prompteol.js';
export { SIMACE_FILE, SIMACE_TABLES } from './simace.js';
export {
  PAPER_IDS,
  PAPER_FILES,
  PAPER_TABLES,
  paperNumbers,
  paperNonNumbers,
  listPaperTables,
  paperTable,
  paperCell,
  printedTable,
  looseName,
  type PaperTableEntry,
  type PaperCellQuery,
} from './lookup.js';
export {
  AVERAGE_SPECS,
  KNOWN_AVERAGE_DISAGREEMENTS,
  checkAverages,
  averageDisagreement,
  type AverageSpec,
  type AverageStatus,
  type AverageCheck,
  type AverageDisagreement,
} from './averages.js';
