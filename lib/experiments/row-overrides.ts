/**
 * A notebook's overrides as they apply to each row of a table. One parameter cell serves rows of
 * different recipes (notebook 02: SimCSE, SBERT and AnglE side by side), so an override applies to
 * the rows whose recipes have its key and is reported as not applied to the others, with why
 * (`objective.loss.weights.angle` means nothing to SimCSE's objective). A key no row has (a typo:
 * `learningRate`) is still an error: the settings a recipe has are listed (./overrides.ts).
 *
 * A top-level key that is a row's label scopes its value to that row (every column of it):
 *
 *   OVERRIDES = { lr: 2e-5, "AnglE-BERT": { objective: { loss: { weights: { angle: 2 } } } } }
 *
 * Values for the whole table apply first, a row's own after them.
 */
import { InputError } from '../util/errors.js';
import { applyOverrides, PARAMETER_CELL, type RecipeOverrides } from './overrides.js';
import type { Recipe } from './recipes/recipe.js';

/** The parameter cell's overrides: settings for every row, and row labels with settings for that row. */
export type TableOverrides = RecipeOverrides & { [rowLabel: string]: unknown };

/** One value an override sets, as a path of keys and the patch that sets only it. */
interface OverrideUnit {
  key: string;
  patch: Record<string, unknown>;
}

/** What one row's recipe became, and the override values that did not apply to it and why. */
export interface RowOverrides {
  recipe: Recipe;
  notApplied: Array<{ key: string; why: string }>;
}

/** The source recorded for a value a row-scoped override set. */
export function rowScopedSource(row: string): string {
  return `${PARAMETER_CELL.replace(/\)$/, '')}, "${row}" only)`;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype;
}

/**
 * The values an override sets, one unit each: a leaf (number, string, array), or an object that
 * is set whole (an objective of another `name`, a `baseStorage`).
 */
function units(patch: Record<string, unknown>, path: string[] = []): OverrideUnit[] {
  const out: OverrideUnit[] = [];
  for (const [k, v] of Object.entries(patch)) {
    if (v === undefined) continue;
    const at = [...path, k];
    const key = at.join('.');
    const whole = !isPlainObject(v) || key === 'baseStorage' || (key === 'objective' && typeof v.name === 'string');
    if (whole) {
      let one: unknown = v;
      for (let i = at.length - 1; i >= 0; i--) one = { [at[i]!]: one };
      out.push({ key, patch: one as Record<string, unknown> });
    } else {
      out.push(...units(v, at));
    }
  }
  return out;
}

/** Deep-merges the units' patches back into one override. */
function combine(us: readonly OverrideUnit[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const into = (dst: Record<string, unknown>, src: Record<string, unknown>) => {
    for (const [k, v] of Object.entries(src)) {
      if (isPlainObject(v) && isPlainObject(dst[k])) into(dst[k] as Record<string, unknown>, v);
      else dst[k] = isPlainObject(v) ? structuredClone(v) : v;
    }
  };
  for (const u of us) into(out, u.patch);
  return out;
}

/** Why `unit` does not apply to `recipe` (its InputError's message), or undefined when it does. */
function whyNot(recipe: Recipe, unit: OverrideUnit): string | undefined {
  try {
    applyOverrides(recipe, unit.patch as RecipeOverrides);
    return undefined;
  } catch (e) {
    if (!(e instanceof InputError)) throw e;
    return e.message.replace(/^override: /, '');
  }
}

/**
 * Applies `overrides` to each row's recipe (`rows`: label and recipe as it runs before overrides).
 * Throws an InputError for an override that is not an object, for a value that applies to no row
 * in its scope (naming why, from the first row's recipe), and for a top-level key that is neither
 * a setting nor a row.
 */
export function applyTableOverrides(rows: ReadonlyArray<{ label: string; recipe: Recipe }>, overrides: TableOverrides | undefined): RowOverrides[] {
  if (overrides === undefined || overrides === null) return rows.map((r) => ({ recipe: r.recipe, notApplied: [] }));
  if (!isPlainObject(overrides)) throw new InputError(`OVERRIDES: expected an object of settings, e.g. { lr: 2e-5 } or { "AnglE-BERT": { lr: 2e-5 } }, got ${JSON.stringify(overrides)}`);
  const labels = new Set(rows.map((r) => r.label));
  const global: Record<string, unknown> = {};
  const scoped = new Map<string, Record<string, unknown>>();
  for (const [k, v] of Object.entries(overrides)) {
    if (!labels.has(k)) {
      global[k] = v;
      continue;
    }
    if (!isPlainObject(v)) throw new InputError(`OVERRIDES["${k}"]: expected the settings of row ${k}, e.g. { lr: 2e-5 }, got ${JSON.stringify(v)}`);
    scoped.set(k, v);
  }
  const scopes: Array<{ label?: string; units: OverrideUnit[] }> = [{ units: units(global) }, ...[...scoped].map(([label, v]) => ({ label, units: units(v) }))];
  const out = rows.map((r) => ({ recipe: r.recipe, notApplied: [] as RowOverrides['notApplied'] }));
  for (const scope of scopes) {
    const members = rows.map((r, i) => i).filter((i) => scope.label === undefined || rows[i]!.label === scope.label);
    const applies = new Map<number, OverrideUnit[]>(members.map((i) => [i, []]));
    for (const unit of scope.units) {
      const reasons = members.map((i) => whyNot(out[i]!.recipe, unit));
      if (members.length > 0 && reasons.every((w) => w !== undefined)) {
        const where = scope.label ? `row ${scope.label}` : 'any row of this table';
        // A top-level key that is not a setting may be a misspelt row label: list the rows too.
        const top = unit.key.split('.')[0]!;
        const rowsHint = !scope.label && reasons[0]!.startsWith(`'${top}' is not a setting of this recipe; the recipe has`) ? `; nor is '${top}' a row (rows: ${[...labels].join(', ')})` : '';
        throw new InputError(`OVERRIDES${scope.label ? `["${scope.label}"]` : ''}: '${unit.key}' applies to no recipe of ${where}: ${reasons[0]}${rowsHint}`);
      }
      members.forEach((i, j) => {
        if (reasons[j] === undefined) applies.get(i)!.push(unit);
        else out[i]!.notApplied.push({ key: unit.key, why: reasons[j]! });
      });
    }
    for (const [i, us] of applies) {
      if (us.length > 0) out[i]!.recipe = applyOverrides(out[i]!.recipe, combine(us) as RecipeOverrides, scope.label ? rowScopedSource(scope.label) : PARAMETER_CELL);
    }
  }
  return out;
}
