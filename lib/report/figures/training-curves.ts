/**
 * Training curves: loss, a dev metric (Spearman × 100 by default) and the learning rate against
 * the optimiser step, in three stacked panels sharing the step axis; several runs overlaid, one
 * colour per run in every panel.
 *
 * Input: per run the trainer's step log (`StepLog`: step, loss, lr) and eval log (`EvalLog`: step,
 * metrics), live from `Trainer` callbacks or read back from a run record's `details.log` and
 * `details.evals` (lib/report/run-record.ts; `trainingRunFromRecord`).
 *
 * The x axis counts optimiser updates applied to the weights a value was measured on: a StepLog's
 * `step` is the number of updates before that step (its loss is computed on those weights), an
 * EvalLog's the number after which the dev set was evaluated, so both read on one axis.
 */
import type { EvalLog, StepLog } from '../../train/checkpoint.js';
import { InputError } from '../../util/errors.js';
import type { RunRecord } from '../run-record.js';
import { colorAt, emptyFigure, requireFinite, type Figure, type Trace } from './figure.js';

export interface TrainingRun {
  /** Legend name: the run id, or what distinguishes the run from the others overlaid. */
  name: string;
  steps: readonly Pick<StepLog, 'step' | 'loss' | 'lr'>[];
  evals: readonly Pick<EvalLog, 'step' | 'metrics'>[];
}

export interface TrainingCurvesOptions {
  title?: string;
  /** The dev metric to plot (a key of `EvalLog.metrics`); default 'spearman'. */
  metric?: string;
  /** Factor applied to the metric; default 100 (the papers print ρ × 100, the trainer logs ρ). */
  metricScale?: number;
  /** Figure height in pixels; default 640. */
  height?: number;
}

/**
 * A run record's training log as a `TrainingRun`. Checks the shape of `details.log` and
 * `details.evals` and names the record and the entry when one is not what the trainer writes.
 */
export function trainingRunFromRecord(record: RunRecord, opts: { name?: string; file?: string } = {}): TrainingRun {
  const where = { file: opts.file ?? `run record ${record.experiment}/${record.runId}` };
  const details = (record.details ?? {}) as Record<string, unknown>;
  const log = details.log ?? [];
  const evals = details.evals ?? [];
  if (!Array.isArray(log)) throw new InputError(`details.log: expected an array of step logs, got ${typeof log}`, where);
  if (!Array.isArray(evals)) throw new InputError(`details.evals: expected an array of eval logs, got ${typeof evals}`, where);
  const steps = log.map((e: unknown, i) => {
    const s = e as Partial<StepLog> | null;
    for (const k of ['step', 'loss', 'lr'] as const) {
      if (typeof s?.[k] !== 'number') throw new InputError(`details.log[${i}].${k}: expected a number, got ${JSON.stringify(s?.[k])}`, where);
    }
    return { step: s!.step!, loss: s!.loss!, lr: s!.lr! };
  });
  const evalLogs = evals.map((e: unknown, i) => {
    const v = e as Partial<EvalLog> | null;
    if (typeof v?.step !== 'number') throw new InputError(`details.evals[${i}].step: expected a number, got ${JSON.stringify(v?.step)}`, where);
    if (typeof v.metrics !== 'object' || v.metrics === null) throw new InputError(`details.evals[${i}].metrics: expected an object of numbers`, where);
    return { step: v.step, metrics: v.metrics };
  });
  return { name: opts.name ?? record.runId, steps, evals: evalLogs };
}

/** Panel order, top to bottom; each gets a y axis (y, y2, y3) and an x axis matched to the bottom one. */
const PANELS = ['loss', 'dev', 'lr'] as const;
const DOMAINS: Record<(typeof PANELS)[number], [number, number]> = { loss: [0.68, 1], dev: [0.36, 0.64], lr: [0, 0.28] };

export function trainingCurvesFigure(runs: TrainingRun | readonly TrainingRun[], opts: TrainingCurvesOptions = {}): Figure {
  const list = Array.isArray(runs) ? (runs as readonly TrainingRun[]) : [runs as TrainingRun];
  const metric = opts.metric ?? 'spearman';
  const scale = opts.metricScale ?? 100;
  const metricLabel = scale === 1 ? `dev ${metric}` : `dev ${metric} × ${scale}`;
  const title = opts.title ?? (list.length === 1 ? `Training curves: ${list[0]!.name}` : `Training curves (${list.length} runs)`);
  if (list.every((r) => r.steps.length === 0 && r.evals.length === 0)) {
    return emptyFigure(title, list.length === 0 ? 'no runs given' : 'the runs have no step or eval logs yet');
  }
  const data: Trace[] = [];
  list.forEach((run, i) => {
    const color = colorAt(i);
    const common = { legendgroup: run.name, line: { color, width: 1.5 }, marker: { color } };
    const steps = run.steps.map((s, j) => requireFinite(s.step, `${run.name}: steps[${j}].step`));
    data.push({
      type: 'scatter',
      mode: 'lines',
      name: run.name,
      x: steps,
      y: run.steps.map((s, j) => requireFinite(s.loss, `${run.name}: steps[${j}].loss`)),
      xaxis: 'x',
      yaxis: 'y',
      showlegend: true,
      hovertemplate: `${run.name}<br>step %{x}<br>loss %{y:.4f}<extra></extra>`,
      ...common,
    });
    const evals = run.evals.filter((e) => typeof e.metrics[metric] === 'number');
    data.push({
      type: 'scatter',
      mode: 'lines+markers',
      name: `${run.name}: ${metricLabel}`,
      x: evals.map((e) => e.step),
      y: evals.map((e, j) => requireFinite(e.metrics[metric], `${run.name}: evals[${j}].metrics.${metric}`) * scale),
      xaxis: 'x2',
      yaxis: 'y2',
      showlegend: false,
      hovertemplate: `${run.name}<br>step %{x}<br>${metricLabel} %{y:.2f}<extra></extra>`,
      ...common,
    });
    data.push({
      type: 'scatter',
      mode: 'lines',
      name: `${run.name}: learning rate`,
      x: steps,
      y: run.steps.map((s, j) => requireFinite(s.lr, `${run.name}: steps[${j}].lr`)),
      xaxis: 'x3',
      yaxis: 'y3',
      showlegend: false,
      hovertemplate: `${run.name}<br>step %{x}<br>lr %{y:.3e}<extra></extra>`,
      ...common,
    });
  });
  const yTitles = { loss: 'loss', dev: metricLabel, lr: 'learning rate' };
  const layout: Figure['layout'] = {
    title: { text: title },
    height: opts.height ?? 640,
    margin: { t: 60, r: 20, b: 50, l: 70 },
    legend: { orientation: 'h', y: -0.12 },
    hovermode: 'closest',
  };
  PANELS.forEach((panel, k) => {
    const n = k === 0 ? '' : String(k + 1);
    const bottom = k === PANELS.length - 1;
    layout[`xaxis${n}`] = {
      anchor: `y${n}`,
      domain: [0, 1],
      ...(bottom ? { title: { text: 'step' } } : { matches: 'x3', showticklabels: false }),
    };
    layout[`yaxis${n}`] = {
      anchor: `x${n}`,
      domain: DOMAINS[panel],
      title: { text: yTitles[panel] },
      ...(panel === 'lr' ? { exponentformat: 'e' } : {}),
    };
  });
  const noEvals = list.every((r) => !r.evals.some((e) => typeof e.metrics[metric] === 'number'));
  if (noEvals) {
    layout.annotations = [
      { text: `no dev evaluations with metric '${metric}'`, xref: 'x2 domain', yref: 'y2 domain', x: 0.5, y: 0.5, showarrow: false, font: { color: '#777' } },
    ];
  }
  return { data, layout };
}
