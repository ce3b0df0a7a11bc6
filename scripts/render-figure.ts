/**
 * Static SVG/PNG files of a figure, for READMEs and results/, drawn by plotly.js in headless
 * Chromium (lib/report/figures/render-static.ts):
 *
 *   npx tsx scripts/render-figure.ts results/train-stsb/<run-id>.json   # its training curves
 *   npx tsx scripts/render-figure.ts figure.json --out docs/figure       # a { data, layout } spec
 *
 * Options: --out <path without extension> (default: beside the input, `<input>.curves` for a run
 * record, `<input>` for a spec), --formats svg,png, --width, --height (pixels), --scale (PNG density).
 * Exit status: 0 written; 1 bad input; 2 usage; 3 Chromium or playwright-core missing.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { Figure } from '../lib/report/figures/figure.js';
import { renderFigureFiles, type StaticFormat } from '../lib/report/figures/render-static.js';
import { trainingCurvesFigure, trainingRunFromRecord } from '../lib/report/figures/training-curves.js';
import type { RunRecord } from '../lib/report/run-record.js';
import { InputError, UnavailableError } from '../lib/util/errors.js';

const USAGE = `usage: npx tsx scripts/render-figure.ts <figure.json | run-record.json> [--out <path without extension>]
         [--formats svg,png] [--width <px>] [--height <px>] [--scale <n>]`;

function figureFrom(file: string): { fig: Figure; kind: 'record' | 'spec' } {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new InputError(`not readable JSON (${(e as Error).message})`, { file });
  }
  const v = value as Partial<RunRecord & Figure>;
  if (typeof v.experiment === 'string' && typeof v.runId === 'string') {
    return { fig: trainingCurvesFigure(trainingRunFromRecord(v as RunRecord, { file })), kind: 'record' };
  }
  if (Array.isArray(v.data) && typeof v.layout?.title?.text === 'string') return { fig: v as Figure, kind: 'spec' };
  throw new InputError('expected a run record (experiment, runId, details.log) or a figure spec ({ data: [...], layout: { title: { text } } })', { file });
}

function positive(v: string | undefined, what: string): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!(n > 0)) throw new InputError(`--${what} expects a number > 0, got ${v}`);
  return n;
}

async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseOptionsOrThrow(argv);
  } catch (e) {
    // An unknown option or a missing value: one line, before anything is read or started.
    console.error(`render-figure: ${(e as Error).message.split('\n')[0].replace(/\. To specify a positional argument.*$/, '')} (see --help)`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help || positionals.length !== 1) {
    (values.help ? console.log : console.error)(USAGE);
    return values.help ? 0 : 2;
  }
  return render(values, positionals[0]!);
}

function parseOptionsOrThrow(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      out: { type: 'string' },
      formats: { type: 'string' },
      width: { type: 'string' },
      height: { type: 'string' },
      scale: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
}

async function render(values: ReturnType<typeof parseOptionsOrThrow>['values'], input: string): Promise<number> {
  try {
    const formats = (values.formats ?? 'svg,png').split(',').map((f) => f.trim());
    for (const f of formats) if (f !== 'svg' && f !== 'png') throw new InputError(`--formats: unknown format '${f}': expected svg, png`);
    const { fig, kind } = figureFrom(input);
    const base = values.out ?? input.replace(/\.json$/i, '') + (kind === 'record' ? '.curves' : '');
    const files = await renderFigureFiles(fig, base, {
      formats: formats as StaticFormat[],
      width: positive(values.width, 'width'),
      height: positive(values.height, 'height'),
      scale: positive(values.scale, 'scale'),
    });
    console.log(`render-figure: ${files.join(', ')}`);
    return 0;
  } catch (e) {
    if (e instanceof UnavailableError) {
      console.error(`render-figure: ${e.message}`);
      return 3;
    }
    if (e instanceof InputError) {
      console.error(`render-figure: ${e.message}`);
      return 1;
    }
    throw e;
  }
}

process.exitCode = await main(process.argv.slice(2));
