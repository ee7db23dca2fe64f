export { EndpointAdmission, type EndpointAdmissionOptions, METRICS_INITIAL_LIMIT, METRICS_POLL_MS, metricsUrlOf } from './endpoint.js';
