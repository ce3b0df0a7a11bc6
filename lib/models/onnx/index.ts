/**
 * Models as ONNX graphs: the onnx.proto messages (protobufjs), a graph builder, .onnx files with
 * inline or external weights, the exporters by architecture, and the disk cache of exported graphs
 * keyed by weights. ONNX Runtime runs them (lib/embed/engines).
 */
export { ModelProto, ONNX_DTYPE, type ModelMessage } from './proto.js';
export { OnnxGraphBuilder, type Attribute, type Dim } from './graph-builder.js';
export { writeOnnxModel, readOnnxModel, encodeOnnxModel, DEFAULT_EXTERNAL_DATA_ABOVE, type WriteOnnxOptions } from './model-file.js';
export { ONNX_INPUTS, PACKED_INPUTS, type OnnxInputLayout, type OnnxExporter, type ExportedOnnxGraph, type OnnxExportOptions } from './exporter.js';
// the exporters are rows of the architecture table (../auto.ts); re-exported here for callers of this folder
export { onnxExporterFor, ONNX_ARCHITECTURES } from '../auto.js';
export { cachedOnnxGraph, onnxCacheDir, onnxGraphKey, DEFAULT_ONNX_CACHE_MAX_BYTES, type CachedOnnxGraph, type OnnxGraphCacheOptions } from './graph-cache.js';
