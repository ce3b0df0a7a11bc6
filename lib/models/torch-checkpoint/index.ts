/**
 * PyTorch checkpoints (`pytorch_model.bin`, `*.pt`) read safely: tensors only, no Python code run.
 * ./checkpoint.ts reads the formats, ./unpickler.ts the pickle, ./torch-globals.ts says which
 * globals a checkpoint of tensors may name, ./zip-archive.ts reads the zip (ZIP64 included).
 */
export { openTorchCheckpoint, looksLikeTorchCheckpoint, TorchCheckpoint, type TorchCheckpointFormat, type TorchTensorInfo } from './checkpoint.js';
export { ALLOWED_GLOBALS } from './torch-globals.js';
