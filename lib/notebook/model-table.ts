/**
 * A loaded model as one table row (what a notebook shows after loading it): id, architecture,
 * where it came from, layers, hidden size, parameters, context, weights hash — or, for a model
 * that could not be loaded here, why.
 */
import type { LoadedModel } from '../models/types.js';
import type { SimpleTable } from '../util/table.js';

export function modelTable(m: LoadedModel | { id: string; why: string }): SimpleTable {
  const columns = ['model', 'architecture', 'source', 'layers', 'hidden', 'parameters', 'context', 'weights sha256'];
  if ('why' in m) return { columns: [...columns, 'status'], rows: [[m.id, '', '', '', '', '', '', '', m.why]] };
  const x = m.model;
  return {
    columns,
    rows: [[m.id, x.architecture, m.source + (m.commit ? ` @ ${m.commit.slice(0, 10)}` : ''), x.numLayers, x.hiddenSize, x.numParameters(), x.maxPositions, `${m.weightsSha256.slice(0, 16)}…`]],
  };
}
