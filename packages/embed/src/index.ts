export type { Encoder } from './encoder.js';
export { HashingEncoder } from './hashing.js';
export { checkEmbedding, checkEmbeddings } from './check-vector.js';
export { openEncoder } from './create.js';
export { OnnxEncoder } from './onnx/encoder.js';
export { inspectModelFolder } from './onnx/model-folder.js';
export { askedDevice, cudaOffered, DEVICE_ENV, fallbackWarning, planProviders } from './onnx/providers.js';
export type { AskedDevice, CudaOffer, Provider, ProviderPlan } from './onnx/providers.js';
