/**
 * The GPU check's one JSON and one markdown summary: every step with its status, time, budget and
 * items (a test run, a parity suite at one precision, a configuration measured). The device tool
 * returns at most 8 files from at most two folders deep, so the layout is fixed: gpu-check.json,
 * gpu-check.md and one log per step under logs/ (7 files).
 */
import { mkdirSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { writeFileAtomicSync } from '../../lib/util/atomic-write.js';

export const STEP_NAMES = ['build-tests', 'parity', 'memory', 'speed', 'rehearsal'] as const;
export type StepName = (typeof STEP_NAMES)[number];

export const STEP_TITLES: Record<StepName, string> = {
  'build-tests': '1. Build the addon, run the GPU tests',
  parity: '2. Golden parity on the backend: BERT, the LLaMA decoder, OPT (TF32 and fp32 matmuls)',
  memory: '3. Memory: measured against the shape-only prediction (flagged when off by more than 10%)',
  speed: '4. Speed: tokens/s, PyTorch beside it where it runs, the host-dispatch share of a step',
  rehearsal: "5. Rehearsal rows for real: a few optimiser steps of one row per notebook, beside the row's projection",
};

/**
 * ok; failed; skipped (cannot run here, said why); off (ran, but a figure is outside its expected
 * range — a prediction off by more than 10%, TF32 parity beyond fp32's tolerance: reported, not failed);
 * timed-out (the step's budget ran out before it).
 */
export type ItemStatus = 'ok' | 'failed' | 'skipped' | 'off' | 'timed-out';

export interface StepItem {
  name: string;
  status: ItemStatus;
  /** One line for the markdown summary. */
  detail: string;
  /** The measured values, for programs. */
  values?: Record<string, unknown>;
}

export interface StepResult {
  step: StepName;
  title: string;
  status: 'ok' | 'failed' | 'timed-out';
  seconds: number;
  budgetS: number;
  /** The step's log, relative to the output folder. */
  log: string;
  items: StepItem[];
  /** What the step could not do and why (an error that ended it early). */
  error?: string;
}

export interface GpuCheckReport {
  tool: 'gpu-check';
  version: 1;
  date: string;
  dryRun: boolean;
  backend: string;
  /** Commit, machine, packages (lib/report/provenance.ts). */
  provenance: Record<string, unknown>;
  steps: StepResult[];
  /** Figures the check flagged (status off), by step and item. */
  flagged: string[];
}

export const OUT_FILES = { json: 'gpu-check.json', markdown: 'gpu-check.md', logs: 'logs' } as const;
export const MAX_FILES = 8;
export const MAX_DEPTH = 2;

/** The step's status from its items: failed if any failed, timed-out if one ran out of budget. */
export function stepStatus(items: readonly StepItem[], error?: string): StepResult['status'] {
  if (error || items.some((i) => i.status === 'failed')) return 'failed';
  if (items.some((i) => i.status === 'timed-out')) return 'timed-out';
  return 'ok';
}

function cell(s: string): string {
  return s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

export function renderMarkdown(r: GpuCheckReport): string {
  const p = r.provenance;
  const lines = [
    `# GPU check${r.dryRun ? ' (dry run on the CPU: tiny shapes, not GPU figures)' : ''}`,
    '',
    `${r.date}, backend ${r.backend}; commit ${String(p.gitCommit ?? '?').slice(0, 12)}${p.gitDirty === true ? ' (uncommitted changes)' : ''}; ${String(p.cpu ?? '')}; node ${String(p.node ?? '')}.`,
    '',
    '| step | status | seconds (budget) |',
    '| --- | --- | --- |',
    ...r.steps.map((s) => `| ${s.title} | ${s.status} | ${s.seconds.toFixed(0)} (${s.budgetS}) |`),
    '',
  ];
  if (r.flagged.length) lines.push('Flagged:', '', ...r.flagged.map((f) => `- ${f}`), '');
  for (const s of r.steps) {
    lines.push(`## ${s.title}`, '', `${s.status}, ${s.seconds.toFixed(1)} s of ${s.budgetS} s; log: \`${s.log}\`${s.error ? `; error: ${s.error}` : ''}`, '');
    if (s.items.length) lines.push('| item | status | detail |', '| --- | --- | --- |', ...s.items.map((i) => `| ${cell(i.name)} | ${i.status} | ${cell(i.detail)} |`), '');
  }
  return lines.join('\n');
}

/** Writes gpu-check.json and gpu-check.md into `out` (the logs are already there). */
export function writeReport(out: string, r: GpuCheckReport): void {
  mkdirSync(out, { recursive: true });
  writeFileAtomicSync(join(out, OUT_FILES.json), `${JSON.stringify(r, null, 1)}\n`);
  writeFileAtomicSync(join(out, OUT_FILES.markdown), renderMarkdown(r));
}

/** Every file under `out`, relative, with its depth (1 = directly in it): what the device tool would return. */
export function outputFiles(out: string): Array<{ path: string; depth: number }> {
  const files: Array<{ path: string; depth: number }> = [];
  const walk = (dir: string, depth: number) => {
    for (const e of readdirSync(dir)) {
      const p = join(dir, e);
      if (statSync(p).isDirectory()) walk(p, depth + 1);
      else files.push({ path: relative(out, p), depth });
    }
  };
  walk(out, 1);
  return files;
}
