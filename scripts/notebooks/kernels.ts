/**
 * The Jupyter kernels a notebook runs in, headless (./runner.ts) and in Jupyter (../jupyter.ts):
 * tslab (Node's vm with tslab's TypeScript converter; the notebooks' kernelspec) and Deno's own
 * kernel (`deno jupyter`, the npm package `deno`). Each entry names the process the runner forks
 * (it speaks ./protocol.ts) and the kernelspec written into an executed notebook, as Jupyter writes
 * it for that kernel. docs/jupyter.md says how they differ and why tslab is the default.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const KERNEL_NAMES = ['tslab', 'deno'] as const;
export type KernelName = (typeof KERNEL_NAMES)[number];

/** A script beside this file: the .ts under tsx, the .js once compiled (the GPU bundle, scripts/gpu-pack.mjs). */
function beside(name: string): string {
  return fileURLToPath(new URL(import.meta.url.endsWith('.ts') ? `./${name}.ts` : `./${name}.js`, import.meta.url));
}

/** Where `npm run notebooks` writes executed notebooks by default, and check-rendered reads them: one folder per kernel. */
export function executedNotebooksDir(root: string, kernel: KernelName): string {
  return kernel === 'tslab' ? join(root, 'results', 'notebooks') : join(root, 'results', `notebooks-${kernel}`);
}

export interface NotebookKernel {
  /** The process the runner forks for one notebook. */
  script: string;
  /** What Jupyter writes as the notebook's kernelspec for this kernel. */
  kernelspec: { display_name: string; language: string; name: string };
}

export function notebookKernel(name: KernelName): NotebookKernel {
  switch (name) {
    case 'tslab':
      // What `tslab install` writes (tslab's python/install.py).
      return { script: beside('kernel'), kernelspec: { display_name: 'TypeScript', language: 'typescript', name: 'tslab' } };
    case 'deno':
      // What `deno jupyter --install` writes (its kernel.json).
      return { script: beside('deno-kernel'), kernelspec: { display_name: 'Deno', language: 'typescript', name: 'deno' } };
  }
}
