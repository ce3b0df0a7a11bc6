/**
 * The notebook clean filter in a clone's git config: `.gitattributes` names the filter
 * (`filter=strip-notebook-outputs` for notebooks/), but git runs it only where the clone's config
 * says what command it is, and a clone does not inherit config. `npm run jupyter` calls
 * `ensureNotebookFilter` before starting the server, so outputs written by Jupyter stay out of
 * commits from the first session on; the one line it runs is the documented manual setup
 * (docs/jupyter.md):
 *
 *   git config filter.strip-notebook-outputs.clean "node scripts/strip-notebook-outputs.mjs"
 *
 * A command already set (by the user, or to another filter program) is left alone.
 */
import { spawnSync } from 'node:child_process';

export const NOTEBOOK_FILTER = 'strip-notebook-outputs';
/** Relative to the work tree's top, where git runs filters. */
export const NOTEBOOK_FILTER_COMMAND = 'node scripts/strip-notebook-outputs.mjs';

export type NotebookFilterState =
  | { state: 'configured'; command: string }
  | { state: 'already'; command: string }
  | { state: 'no-git'; reason: string };

function git(root: string, args: string[]): { status: number | null; stdout: string; stderr: string; error?: Error } {
  const r = spawnSync('git', args, { cwd: root, encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '', error: r.error };
}

/** Sets `filter.strip-notebook-outputs.clean` in the clone at `root` when it is unset; see the file comment. */
export function ensureNotebookFilter(root: string, command = NOTEBOOK_FILTER_COMMAND): NotebookFilterState {
  const inside = git(root, ['rev-parse', '--is-inside-work-tree']);
  if (inside.error) return { state: 'no-git', reason: `git is not available (${inside.error.message})` };
  if (inside.status !== 0 || inside.stdout.trim() !== 'true') return { state: 'no-git', reason: `${root} is not a git work tree` };
  const key = `filter.${NOTEBOOK_FILTER}.clean`;
  const current = git(root, ['config', '--get', key]);
  if (current.status === 0 && current.stdout.trim() !== '') return { state: 'already', command: current.stdout.trim() };
  const set = git(root, ['config', '--local', key, command]);
  if (set.status !== 0) return { state: 'no-git', reason: `git config ${key} failed: ${set.stderr.trim() || `exit ${set.status}`}` };
  return { state: 'configured', command };
}
