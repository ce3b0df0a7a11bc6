/**
 * The tfjs backends this project knows by name. Its own file so that `auto.ts` (which picks one)
 * and `index.ts` (which starts one and imports `auto.ts`) both read it without importing each other.
 */
export const BACKEND_NAMES = ['cpu', 'wasm', 'cuda', 'tensorflow'] as const;
export type BackendName = (typeof BACKEND_NAMES)[number];
