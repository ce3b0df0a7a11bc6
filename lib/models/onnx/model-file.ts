/**
 * Writing and reading .onnx files. A protobuf message cannot exceed 2 GiB, so when the
 * initializers of a model pass `externalDataAbove` bytes (default: 2 GiB less a margin for the
 * graph itself) every initializer of 1 KiB or more goes to `<model file>.data` beside it, as ONNX's
 * external data (TensorProto.external_data: location, offset, length), each at an offset aligned to
 * 64 KiB so ONNX Runtime can map the file instead of copying it. Both files are written to
 * temporary names and renamed into place, data file first, so a reader never sees half a model.
 */
import { closeSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { tempPathFor, writeFileAtomicSync } from '../../util/atomic-write.js';
import { InputError } from '../../util/errors.js';
import { ModelProto, ONNX_DATA_LOCATION, type ModelMessage, type TensorMessage } from './proto.js';

/** protobuf's hard limit on a message, with room left for the graph's nodes and small constants. */
export const DEFAULT_EXTERNAL_DATA_ABOVE = 2 ** 31 - 64 * 2 ** 20;
/** Initializers smaller than this stay inline even in a model with external data (ONNX's convention). */
const EXTERNAL_MIN_BYTES = 1024;
/** Offsets of external tensors are multiples of this (mmap granularity: 4 KiB pages on Linux, 64 KiB on Windows). */
const EXTERNAL_ALIGNMENT = 65536;

export interface WriteOnnxOptions {
  /** Initializer bytes above which weights go to an external data file (default DEFAULT_EXTERNAL_DATA_ABOVE). */
  externalDataAbove?: number;
}

export interface WrittenOnnxModel {
  /** The .onnx file, then the external data file if there is one. */
  files: string[];
  externalData: boolean;
}

function initializerBytes(model: ModelMessage): number {
  return model.graph.initializer.reduce((s, t) => s + (t.rawData?.byteLength ?? 0), 0);
}

/** The model's protobuf bytes (every initializer inline). */
export function encodeOnnxModel(model: ModelMessage): Uint8Array {
  return ModelProto.encode(model as unknown as Record<string, unknown>).finish();
}

/** Writes `model` to `path` (and `path`.data when its weights are too large to stay inline). */
export function writeOnnxModel(model: ModelMessage, path: string, opts: WriteOnnxOptions = {}): WrittenOnnxModel {
  const limit = opts.externalDataAbove ?? DEFAULT_EXTERNAL_DATA_ABOVE;
  if (initializerBytes(model) <= limit) {
    writeFileAtomicSync(path, encodeOnnxModel(model));
    return { files: [path], externalData: false };
  }
  const dataPath = `${path}.data`;
  const location = basename(dataPath);
  const tmp = tempPathFor(dataPath);
  mkdirSync(dirname(dataPath), { recursive: true });
  const fd = openSync(tmp, 'w');
  const initializer: TensorMessage[] = [];
  try {
    let offset = 0;
    for (const t of model.graph.initializer) {
      const raw = t.rawData;
      if (!raw || raw.byteLength < EXTERNAL_MIN_BYTES) {
        initializer.push(t);
        continue;
      }
      const start = Math.ceil(offset / EXTERNAL_ALIGNMENT) * EXTERNAL_ALIGNMENT;
      if (start > offset) writeSync(fd, new Uint8Array(start - offset), 0, start - offset, offset);
      writeSync(fd, raw, 0, raw.byteLength, start);
      offset = start + raw.byteLength;
      initializer.push({
        name: t.name,
        dims: t.dims,
        dataType: t.dataType,
        dataLocation: ONNX_DATA_LOCATION.external,
        externalData: [
          { key: 'location', value: location },
          { key: 'offset', value: String(start) },
          { key: 'length', value: String(raw.byteLength) },
        ],
      });
    }
  } catch (e) {
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw e;
  }
  closeSync(fd);
  renameSync(tmp, dataPath);
  writeFileAtomicSync(path, encodeOnnxModel({ ...model, graph: { ...model.graph, initializer } }));
  return { files: [path, dataPath], externalData: true };
}

/** Reads an .onnx file's ModelProto (initializers inline or as external-data references). */
export function readOnnxModel(path: string): ModelMessage {
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(path);
  } catch (e) {
    throw new InputError(`cannot read ONNX model (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`, { file: path });
  }
  try {
    return ModelProto.toObject(ModelProto.decode(bytes), { longs: Number, defaults: false, arrays: true }) as unknown as ModelMessage;
  } catch (e) {
    throw new InputError(`not a valid ONNX model (protobuf: ${(e as Error).message})`, { file: path });
  }
}
