/** Types of ./jupyter-json.mjs (plain JavaScript: git runs the notebook filter with plain node). */
export declare function splitLinesAsPython(s: string): string[];
export declare function jupyterNotebookText(nb: unknown): string;
