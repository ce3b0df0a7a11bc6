/**
 * `npm run notebooks -- <nb> --submit slurm` (scripts/notebooks/slurm.ts) against a real Slurm
 * (slurm-wlm 22.05) started on localhost (test/helpers/slurm-cluster.ts): the plan fixture's three
 * runs (test/fixtures/plan-notebooks/plan-fixture.ipynb, the smoke preset's tiny BERT on the CPU
 * backends) go out as a job array with --wait; one task requeues itself (`scontrol requeue`) at
 * step 2 of its training and blocks until Slurm kills it (checkpoints every step, lock left behind),
 * and Slurm runs it again, resuming. The rendered notebook's numbers equal a plain run's on a fresh folder, and
 * the resumed run's record equals the uninterrupted one's (metrics, losses, evaluations,
 * predictions). Skips, saying why, where Slurm is not installed or the tests do not run as root.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { readPlanRunMarker } from '../lib/experiments/plan-workers.js';
import { packageRoot } from '../lib/util/package-root.js';
import { renderedNumbers, runNotebooks, runsTableHtml } from './helpers/notebook-cli.js';
import { slurmMissing, startSlurmCluster, type SlurmCluster } from './helpers/slurm-cluster.js';

const ROOT = packageRoot();
const why = slurmMissing() ?? (existsSync(join(ROOT, 'dist', 'index.js')) ? undefined : 'dist/ is not built (npm run build; npm test builds it first)');
const REQUEUED_ROW = 'AnglE-BERT-all';

interface Rec {
  file: string;
  record: { metrics: Record<string, number>; details: { tableRow: string; runKey: string; log: Array<Record<string, unknown>>; evals: Array<Record<string, unknown>>; predictionsFile?: string } };
}

function recordsByRow(resultsDir: string): Map<string, Rec> {
  const dir = join(resultsDir, 'plan-fixture');
  const out = new Map<string, Rec>();
  for (const f of readdirSync(dir).filter((x) => x.endsWith('.json') && !x.endsWith('.predictions.json'))) {
    const record = JSON.parse(readFileSync(join(dir, f), 'utf8')) as Rec['record'];
    assert.equal(out.has(record.details.tableRow), false, `${record.details.tableRow} has one record (each run ran once)`);
    out.set(record.details.tableRow, { file: join(dir, f), record });
  }
  return out;
}

/** What decides a run's numbers, without its times. */
function numbersOf(r: Rec): unknown {
  const { details } = r.record;
  const predictions = details.predictionsFile ? (JSON.parse(readFileSync(join(r.file, '..', details.predictionsFile), 'utf8')) as { predictions: number[] }).predictions : undefined;
  return {
    metrics: r.record.metrics,
    runKey: details.runKey,
    log: details.log.map(({ step, loss, lr }) => ({ step, loss, lr })),
    evals: details.evals.map(({ step, metrics }) => ({ step, metrics })),
    predictions,
  };
}

describe('a plan as a Slurm job array', { skip: why ?? false }, () => {
  let cluster: SlurmCluster;
  const tmp = mkdtempSync(join(tmpdir(), 'slurm-plan-'));
  before(async () => {
    cluster = await startSlurmCluster();
  });
  after(async () => {
    await cluster?.stop();
    rmSync(tmp, { recursive: true, force: true });
  });

  test('--dry-run prints the array (a task per run, by key, USR1 before the limit) and the render job after it', async () => {
    const out = await runNotebooks(['plan-fixture', '--submit', 'slurm', '--dry-run', '--partition', 'test', '--time', '01:00:00', '--gpus-per-run', '2'], join(tmp, 'dry'), cluster.env);
    assert.equal(out.code, 0, out.stderr);
    for (const line of ['#SBATCH --array=0-2', '#SBATCH --signal=B:USR1@300', '#SBATCH --requeue', '#SBATCH --gres=gpu:2', '#SBATCH --partition=test', '#SBATCH --time=01:00:00', '--only-run "$key"', '#SBATCH --dependency=afterok:<array job id>']) {
      assert.ok(out.stdout.includes(line), `${line} in:\n${out.stdout}`);
    }
    assert.equal(existsSync(join(tmp, 'dry', 'slurm')), false, 'a dry run writes nothing');
  });

  test('--wait: the rendered numbers equal a plain run; the requeued task resumed to the record an uninterrupted run writes', async () => {
    const plainDir = join(tmp, 'plain');
    const plain = await runNotebooks(['plan-fixture', '--out', join(tmp, 'nb-plain')], plainDir);
    assert.equal(plain.code, 0, plain.stderr);

    const results = join(tmp, 'results');
    const nbDir = join(tmp, 'nb-slurm');
    const out = await runNotebooks(['plan-fixture', '--submit', 'slurm', '--gpus-per-run', '0', '--wait', '--out', nbDir], results, { ...cluster.env, FIXTURE_REQUEUE_ROW: REQUEUED_ROW });
    const submission = join(results, 'slurm', 'plan-fixture');
    const taskLogs = () => (existsSync(submission) ? readdirSync(submission).flatMap((s) => readdirSync(join(submission, s, 'logs')).map((f) => `--- ${f}\n${readFileSync(join(submission, s, 'logs', f), 'utf8').slice(-3000)}`)) : []).join('\n');
    assert.equal(out.code, 0, `${out.stdout}\n${out.stderr}\n${taskLogs()}\n${cluster.logs()}`);
    assert.match(out.stdout, /submitted job array \d+ \(3 task\(s\)\)/);

    assert.deepEqual(renderedNumbers(join(nbDir, 'plan-fixture.ipynb')), renderedNumbers(join(tmp, 'nb-plain', 'plan-fixture.ipynb')));
    const ours = recordsByRow(results);
    const theirs = recordsByRow(plainDir);
    assert.equal(ours.size, 3);
    for (const [row, rec] of ours) assert.deepEqual(numbersOf(rec), numbersOf(theirs.get(row)!), `${row}: the same numbers as the plain run`);

    // The requeued task: stopped at step 2 with a checkpoint, run again by Slurm, resumed.
    const markers = readdirSync(join(results, 'plan-fixture', 'plan-runs')).map((f) => readPlanRunMarker(results, 'plan-fixture', f.replace(/\.json$/, ''))!);
    const requeued = markers.find((m) => m.label.startsWith(REQUEUED_ROW))!;
    assert.equal(requeued.training.status, 'resumed', JSON.stringify(requeued));
    const log = readFileSync(join(results, requeued.worker!.slurmLog!), 'utf8');
    assert.match(log, /SIGTERM; the run writes a checkpoint and stops/);
    assert.match(log, /\(restart 1\)/);
    for (const m of markers.filter((x) => x !== requeued)) assert.equal(m.training.status, 'trained', JSON.stringify(m));
    // Job, task log and worker log of each run in the runs table; the array's state beside the logs.
    const html = runsTableHtml(join(nbDir, 'plan-fixture.ipynb'));
    for (const m of markers) {
      assert.match(m.worker?.slurmJob ?? '', /^\d+_[0-2]$/);
      assert.ok(html.includes(`slurmJob: ${m.worker!.slurmJob}`) && html.includes(m.worker!.slurmLog!), `${m.label} linked in the runs table`);
    }
    const [stamp] = readdirSync(submission);
    assert.match(readFileSync(join(submission, stamp!, 'array-state.txt'), 'utf8'), /JobState=COMPLETED/);
  });
});
