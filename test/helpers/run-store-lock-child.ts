/**
 * A worker of the run-store lock tests: asks the run store for each key in turn; the work a key
 * runs appends "<key> <pid>" to a log file (what the test counts), then writes a training record
 * (the real writer, a fixture result) with that key, so a later request for the key reuses it.
 * Prints one JSON line per key: {"key", "status"}.
 *
 *   tsx test/helpers/run-store-lock-child.ts <resultsDir> <logFile> <key,key,...> [--die-in <key>] [--hold-ms N]
 *
 * --die-in <key>: kill itself (SIGKILL, no cleanup) in the middle of that key's work, lock held.
 * --hold-ms N: each key's work takes N ms (more overlap between the racing workers; correctness
 * never depends on it).
 */
import { appendFileSync } from 'node:fs';
import { storedRun } from '../../lib/experiments/run-store.js';
import { writeTrainingRecord } from '../../lib/report/training-record.js';
import { goldScores, MODEL, predictionsFor, PROVENANCE, trainResult } from './report-fixtures.js';

const [resultsDir, logFile, keyList, ...rest] = process.argv.slice(2);
const flag = (name: string) => (rest.includes(name) ? rest[rest.indexOf(name) + 1] : undefined);
const dieIn = flag('--die-in');
const holdMs = Number(flag('--hold-ms') ?? 0);
const gold = goldScores();

for (const [i, key] of keyList!.split(',').entries()) {
  const r = await storedRun({ experiment: 'race', resultsDir, key, label: `run ${key}`, lock: { pollMs: 10 } }, async (dir) => {
    appendFileSync(logFile!, `${key} ${process.pid}\n`);
    if (key === dieIn) process.kill(process.pid, 'SIGKILL');
    if (holdMs > 0) await new Promise((res) => setTimeout(res, holdMs));
    const predictions = predictionsFor(gold, 0.5, 100 + i);
    const file = writeTrainingRecord(trainResult({ name: 'cls', seed: 1, runId: '', predictions, gold, testSpearman: 0.5, devSpearman: 0.5 }), {
      experiment: 'race',
      resultsDir: dir,
      provenance: PROVENANCE,
      model: MODEL,
      runId: `2026-01-01T00-00-00Z-${key}-${process.pid}`,
      details: { runKey: key },
    });
    return { file, status: 'trained' as const, message: 'trained' };
  });
  process.stdout.write(JSON.stringify({ key, status: r.status }) + '\n');
}
