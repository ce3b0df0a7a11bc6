/**
 * Inference engines: what turns token batches into hidden states for the sentence encoders
 * (ONNX Runtime on CPU hosts, the model's tfjs forward elsewhere), and the switch between them.
 */
export { chooseInferenceEngine, parseEngineChoice, INFERENCE_ENGINE_CHOICES, type InferenceEngineChoice, type ChooseEngineOptions } from './choose.js';
export { OnnxEngine, type OnnxEngineOptions } from './onnx-engine.js';
export { TfjsEngine, rowSlice, DEFAULT_ACTIVATION_BUDGET_BYTES, type TfjsEngineOptions } from './tfjs-engine.js';
export { loadOnnxRuntime, ONNX_RUNTIME_MODULE, type LoadedOnnxRuntime } from './onnx-runtime.js';
export { INFERENCE_ENGINES, type InferenceEngine, type InferenceEngineName, type EngineOutput, type EngineRunOptions } from './types.js';
export { OnnxFileEngine, checkEncoderGraph, type OnnxGraphFile, type OnnxGraphSource, type OnnxFileEngineOptions } from './onnx-file-engine.js';
export { loadOnnxInferenceModel, OnnxInferenceModel, ownInferenceEngine, OWN_ONNX_FILE, type OnnxInferenceLoadOptions } from './onnx-inference-model.js';
