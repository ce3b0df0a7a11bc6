/**
 * Loading onnxruntime-node, ONNX Runtime's own Node binding (an optional dependency: its native
 * library ships in the npm package for linux/darwin/win32 x64 and arm64, CPU execution provider).
 * Loaded once per process, on first use, so a machine without it pays nothing and learns why once.
 */
import { createRequire } from 'node:module';

export type OrtModule = typeof import('onnxruntime-node');
export type LoadedOnnxRuntime = { ort: OrtModule; version: string } | { error: string };

export const ONNX_RUNTIME_MODULE = 'onnxruntime-node';

const loaded = new Map<string, Promise<LoadedOnnxRuntime>>();

async function load(specifier: string): Promise<LoadedOnnxRuntime> {
  try {
    const mod = (await import(specifier)) as OrtModule & { default?: OrtModule };
    const ort = (mod.InferenceSession ? mod : mod.default) as OrtModule | undefined;
    if (!ort?.InferenceSession) return { error: `${specifier} loaded without an InferenceSession export` };
    let version = ort.env?.versions?.node ?? '';
    if (!version) {
      try {
        version = (createRequire(import.meta.url)(`${specifier}/package.json`) as { version: string }).version;
      } catch {
        version = 'unknown version';
      }
    }
    return { ort, version };
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') return { error: `${specifier} is not installed (npm install ${specifier})` };
    return { error: `${specifier} failed to load: ${(e as Error).message.split('\n')[0]}` };
  }
}

/**
 * The onnxruntime-node module and its version, or why it could not be loaded. `specifier` names
 * another module to load instead (tests use a missing one to see the fallback).
 */
export function loadOnnxRuntime(specifier: string = ONNX_RUNTIME_MODULE): Promise<LoadedOnnxRuntime> {
  let p = loaded.get(specifier);
  if (!p) {
    p = load(specifier);
    loaded.set(specifier, p);
  }
  return p;
}
