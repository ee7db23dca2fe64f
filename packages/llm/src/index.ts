export type { ChatRequest, ChatResult, LlmBackend } from './backend.js';
export { sampleSoftmax, SurrogateAgent } from './surrogate/agent.js';
export { SurrogateBackend } from './surrogate/backend.js';
export type { AgentHooks, AgentView, ScenarioModel } from './surrogate/scenario.js';
export { heatBathProbabilities, heatBathStates } from './surrogate/scenarios/heat-bath/heat-bath.js';
export { lineAfter, mentions } from './surrogate/team-read.js';
export type { TeamView } from './surrogate/team-read.js';
export {
  checkScenario,
  impliedScenarios,
  NEUTRAL_SCENARIO,
  registerScenario,
  scenarioModel,
  scenarioNames,
} from './surrogate/scenarios/index.js';
export { createBackend } from './create.js';
export { startSurrogateServer } from './server/app.js';
export type { SurrogateServer } from './server/app.js';
export { FAULT_KINDS } from './server/types.js';
export { estimateTokenIds, TOKENIZER } from './server/vllm-model.js';
export type { VllmStats } from './server/vllm-model.js';
export type { FaultKind, SurrogateServerOptions } from './server/types.js';
export { endpointsOf, EndpointUnavailableError, waitForEndpoints } from './health.js';
export type { EndpointWait } from './health.js';
export { DEFAULT_HEALTH_BOUNDS, EndpointUnhealthyError, HealthBreaker, unhealthyCause } from './retry/breaker.js';
export type { AttemptKind, AttemptSample, HealthBounds } from './retry/breaker.js';
