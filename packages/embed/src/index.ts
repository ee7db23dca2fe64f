export * from './encoder.js';
export * from './hashing.js';
export * from './check-vector.js';
export * from './create.js';
export { OnnxEncoder, DEFAULT_MAX_WAIT_MS, sha256File, type OnnxOptions, type OnnxEncoderSpec } from './onnx/encoder.js';
export { inspectModelFolder, checkSignature, EXPORT_FIX, type ModelFolder, type ErrorPlace, type TensorInfo, type ModelSignature } from './onnx/model-folder.js';
export { OnnxTokenizer, padBatch, type TokenBatch } from './onnx/tokenize.js';
export { MicroBatcher } from './onnx/batcher.js';
export type { Loaded as OnnxModelInfo, Device as OnnxDevice } from './onnx/protocol.js';
