/**
 * Run-time configuration that comes from the environment. lib/ never bakes in a path: the
 * data root, the default model and the backend come from these variables (or from arguments,
 * which always win).
 *
 * | variable           | meaning                                                            |
 * |--------------------|--------------------------------------------------------------------|
 * | ANGLE_DATA_DIR     | local data root laid out like princeton-nlp/datasets-for-simcse + GLUE (see lib/data) |
 * | ANGLE_MODEL        | default model: a Hub id or a local model directory                 |
 * | ANGLE_BACKEND      | tfjs backend: cpu (default), wasm, cuda, tensorflow                |
 * | ANGLE_GOLDEN_DIR   | a golden reference directory (parity command and tests)            |
 * | ANGLE_RESULTS_DIR  | where runs write results (default: ./results)                      |
 * | ANGLE_PRESET       | the notebook preset the runner selected (smoke, paper)             |
 * | HF_HOME, HF_ENDPOINT, HF_HUB_OFFLINE, HF_TOKEN | as in huggingface_hub (see lib/models/hub) |
 */
export interface EnvConfig {
  dataDir?: string;
  model?: string;
  backend?: string;
  goldenDir?: string;
  resultsDir: string;
  preset?: string;
}

function nonEmpty(v: string | undefined): string | undefined {
  return v !== undefined && v.trim() !== '' ? v.trim() : undefined;
}

export function envConfig(env: NodeJS.ProcessEnv = process.env): EnvConfig {
  return {
    dataDir: nonEmpty(env.ANGLE_DATA_DIR),
    model: nonEmpty(env.ANGLE_MODEL),
    backend: nonEmpty(env.ANGLE_BACKEND),
    goldenDir: nonEmpty(env.ANGLE_GOLDEN_DIR),
    resultsDir: nonEmpty(env.ANGLE_RESULTS_DIR) ?? 'results',
    preset: nonEmpty(env.ANGLE_PRESET),
  };
}
