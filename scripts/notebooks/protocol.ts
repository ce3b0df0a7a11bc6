/**
 * The messages between the notebook runner (./runner.ts) and a notebook's kernel process
 * (./kernel.ts): the runner sends the cells once, the kernel reports what each cell does.
 */
import type { MimeBundle, NotebookOutput } from './ipynb.js';

export interface KernelInput {
  dir: string;
  cells: { index: number; source: string }[];
}

export type KernelMessage =
  | { type: 'kernel-info'; languageInfo: Record<string, unknown> }
  | { type: 'cell-start'; cell: number; executionCount: number }
  | { type: 'output'; cell: number; output: NotebookOutput; displayId?: string }
  | { type: 'update-display'; displayId: string; data: MimeBundle; metadata: Record<string, unknown> }
  | { type: 'cell-end'; cell: number; ok: boolean }
  | { type: 'done' };
