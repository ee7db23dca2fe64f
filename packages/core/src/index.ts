export { mixSeed, rngFrom } from './rng.js';
export type { Rng } from './rng.js';
export { EVENT_ROWS_SQL, isEventRole, TAGS, TEAM_ROLES } from './event.js';
export type { EncoderColumn, EventRow, ReplyStatus, Role, RunColumns, Tag, TeamRole } from './event.js';
export { InputError, toError } from './errors.js';
export { decodeUtf8, firstInvalidUtf8 } from './utf8.js';
export {
  DEFAULT_PROTOCOL,
  isBoardProtocol,
  isProtocolName,
  isSummaryProtocol,
  PROTOCOL_NAMES,
  PROTOCOLS,
  armOf,
  protocolOf,
  registerProtocol,
  type ProtocolCallCost,
  type ProtocolCallRole,
  type ProtocolCostInput,
  type ProtocolDef,
  type ProtocolName,
  type ProtocolPrompt,
  type ProtocolPrompts,
  protocolPrompt,
} from './protocol/registry.js';
export { resolveJudgeInFlight, sweepSpecJsonSchema, sweepSpecSchema } from './spec/schema.js';
export type { Dynamics, EncoderSpec, JudgeSpec, SweepSpec, WhiteningSpec } from './spec/schema.js';
export { armCount, armLabel, dynamicsArms, populationArmLabel, populationArms, templateArms } from './spec/arms.js';
export type { PopulationArm, TemplateArm } from './spec/arms.js';
export { backendSchema, JUDGE_IN_FLIGHT_FLOOR, judgeInFlight, surrogateBackendSchema } from './spec/backend.js';
export type { AnthropicBackendSpec, BackendSpec, OpenAIBackendSpec, SurrogateBackendSpec } from './spec/backend.js';
export { firstIssue, issueToInputError, parseSweepSpec } from './spec/parse.js';
export { checkSweepBounds } from './spec/bounds.js';
export { checkMemoryBudget, formatBytes, MEMORY, parseMemoryBudget, sweepMemoryBytes } from './spec/memory.js';
export type { MemoryAvailable } from './spec/memory.js';
export { parseShard, SHARD_POLICY, shardLabel, shardPartition, shardRuns } from './spec/shard.js';
export type { Shard, ShardPolicy } from './spec/shard.js';
export { parseDataset, promptSchema } from './dataset.js';
export type { Prompt } from './dataset.js';
export { classifyAnswer, normaliseText } from './answers.js';
export {
  factsFound,
  followsInstruction,
  IFEVAL_CHECKS,
  ifevalStrict,
  readDriftVerdict,
  goldDriftVerdict,
  goldVerdictOf,
  scoreAnswer,
  teamDrift,
  teamTurns,
} from './team-metrics/index.js';
export type {
  IfevalInstruction,
  TeamDrift,
  TeamEventRow,
  TeamScore,
  TeamTurn,
} from './team-metrics/index.js';
export { DEFAULT_TEMPLATE, estimateTokens, parseTemplate, promptLength, renderPrompt } from './prompt.js';
export type { ChatMessages, PromptContext, PromptTemplate } from './prompt.js';
export {
  BUILTIN_TEMPLATES,
  builtinTemplate,
  DEFAULT_TEMPLATE_NAME,
  PANTA_V1_TEMPLATE,
  RHEON_PREFIX_TEMPLATE,
  RHEON_TEMPLATE,
} from './templates.js';
export {
  adaptiveGroup,
  configArms,
  configId,
  drawPrompts,
  graphFor,
  planSweep,
  runEvents,
  selectPrompts,
  sweepEvents,
  trialPromptsOf,
} from './plan.js';
export type { AdaptiveGrids } from './plan.js';
export { maximalGrids, nextTemperatures, runGroup, sweepPartition, sweepShardRuns } from './adaptive.js';
export type { AdaptiveStep, RunSeries } from './adaptive.js';
export { boundingTemperatures, maxTemperatureCount, roundTemperature, startGrid } from './spec/temperatures.js';
export type { AdaptiveTemperatures } from './spec/temperatures.js';
export type { ArmFiles, RunArms, RunPlan } from './plan.js';
export { criticalPath, eventSeed, Schedule } from './schedule.js';
export type { EventPlan, EventStream } from './schedule.js';
export { keptReads } from './team/calls.js';
export type { TeamCallPlan, TeamRead, TeamReadKind, TeamRun } from './team/calls.js';
export { isTeamDynamics, poolsBudget, TEAM_SCHEDULES, teamCalls, teamEventCount, teamSchedule } from './team/schedules.js';
export { resolveBoardRevisions } from './team/spec.js';
export type { TeamDynamics, TeamScheduleDef } from './team/schedules.js';
export {
  BOARD_TOOL,
  BOARD_TOOL_OWN,
  DRIFT_ERROR_TYPES,
  EXTRACT_LINE,
  EXTRACTED_LINE,
  EXTRACTOR_ASK,
  FULL_PLAN,
  OBSERVER_ASK,
  observedTeam,
  generatedPersona,
  oneLine,
  outputLine,
  parseVote,
  PERSONA_LINE,
  renderTeamCall,
  SOP_FORM,
  subtaskOf,
  TEAM_SYSTEM,
  TEAM_TASK,
  TRACE_LINE,
  ARGUMENT_LINE,
  DEBATE_ASK,
  DEBATE_CALLED,
  DEBATE_OFFER,
  debatingTeam,
} from './team/prompts.js';
export { callsDebate, DEBATE_LINE_PREFIX, debateMotion } from './team/demand.js';
export type { TeamPromptInput } from './team/prompts.js';
export { teamAnswerTokens, teamCallCosts } from './team/cost.js';
export { decodeSpentVersion, encodeSpentVersion, poolShare } from './team/pool.js';
export type { TeamRoleCost } from './team/cost.js';
export { TeamSchedule } from './team/schedule.js';
export { scheduleFor } from './team/stream.js';
export { resolveBudgetRule, resolveTeamSolution } from './team/spec.js';
export { solutionWinner, tallyVotes } from './team/vote.js';
export { DataflowPlanner } from './dataflow.js';
export {
  CovarianceAccumulator,
  driftStats,
  driftTolerance,
  fitWhitening,
  focusSeries,
  measureSnapshot,
  snapshotAccuracy,
  symmetricEigen,
  toSpin,
  unitVector,
} from './measure/index.js';
export type { Whitening } from './measure/index.js';
export {
  buildGraph,
  edgeListSize,
  GeometryError,
  geometryLabel,
  ownNeighbourBytes,
  shufflesNeighbours,
  parseEdgeFile,
  parseEdgeList,
  validateEdges,
} from './geometry/index.js';
export type { Edge, GeometrySpec } from './geometry/index.js';
export { checkBackendLimits, checkContextBudget } from './budget.js';
export { parseRubric, parseVerdict, rubric, RUBRIC_SYSTEM, VERDICT_MAX_TOKENS } from './rubric.js';
export { campaignCost, DEFAULT_CALLS_PER_SECOND } from './campaign-cost.js';
export { CHARS_PER_TOKEN } from './names.js';
export type { CallCost, CallKind, CampaignCost, CampaignInput, ContextCost } from './campaign-cost.js';
export { cachedPrefixTokens, decodeStepMs, GPU_COST_MODELS, parseGpuCostModel, requestGpuSeconds } from './gpu/cost-model.js';
export { AdmissionLimit, type AdmissionTuning, parseVllmMetrics, QueueClock, type ServerLoad } from './admission.js';
export type { GpuCostModel, GpuCostModelName } from './gpu/cost-model.js';
export { gpuPlan, runGpuCost, sharedNeighbourLines, shardWeigher, shardWeigherFor } from './gpu/gpu-plan.js';
export type { GpuGroup, GpuPlan, GpuPlanInput, NeighbourOrder, RunGpuCost } from './gpu/gpu-plan.js';
export { blockHashes, KV_BUSY_USAGE, VllmEngine } from './gpu/vllm-engine.js';
export type { SchedulingPolicy, VllmCompletion, VllmEngineStats, VllmRequest } from './gpu/vllm-engine.js';
export { assignPopulation, parsePopulation } from './population.js';
export type { PopulationEntry } from './population.js';
export {
  BELIEF_LINE,
  BOARD_INSTRUCTION,
  isDrift,
  MERGE_NOTE,
  mergeNote,
  parseProtocolCall,
  personaText,
  PROTOCOL_SYSTEM,
  splitAgentPrompt,
} from './protocol/prompts.js';
export { applyEntries, decodeBoardVersion, encodeBoardVersion, foldLive, parseBoardReply, renderEntries } from './protocol/board.js';
export type { BoardEntry } from './protocol/board.js';
export {
  appendBoardLines,
  BOARD_LINE_PREFIX,
  objectKey,
  OBSERVATION_LINE_PREFIX,
  parseBoardLines,
  parseLedgerLines,
} from './protocol/board-log.js';
export type { BoardLine, BoardLogEntry, LedgerType } from './protocol/board-log.js';
export {
  BOARD_EMPTY,
  BOARD_ENTRY,
  BOARD_HEADER,
  boardHeaderDropping,
  DEFAULT_BOARD_TOKENS,
  renderBoard,
  TABLE_EMPTY,
  TABLE_HEADER,
  tableHeaderDropping,
} from './protocol/board-render.js';
export type { RenderedBoard } from './protocol/board-render.js';
export {
  boardAuthorName,
  boardReadBy,
  boardLinesOf,
  boardRevisions,
  boardShownTo,
  keepsBoard,
  teamBoardEntries,
  writesBoard,
} from './protocol/board-team.js';
export type { TeamBoardRow } from './protocol/board-team.js';
export {
  boundaryGate,
  controlCentre,
  divergence,
  hasBoundaries,
  measureControl,
  medoid,
  nextControl,
  shouldStop,
  temperatureAt,
} from './protocol/control.js';
export type { ControlState, RunControls, SweepControl, TeamControls } from './protocol/control.js';
export { calibrateTau, cdsExceedance, TAU_GRID, tauAt } from './protocol/tau-calibration.js';
export {
  CONTEXT_MERGE_INSTRUCTION,
  decodeSummaryVersion,
  encodeSummaryVersion,
  parseSsvpCall,
  renderContextMerge,
  renderSummary,
  SUMMARY_INSTRUCTION,
} from './protocol/ssvp.js';
export type { ContextItem, ParsedSsvpCall, SummaryVersion } from './protocol/ssvp.js';
export type { CdsExceedance, TauCalibration, TauShare } from './protocol/tau-calibration.js';
export { boundedText, redact, REDACTED, Redactor, redactValue, registerSecret, secretsInEnv } from './redact.js';
export {
  ARM_METRIC_TITLES,
  ARM_METRICS,
  armObservations,
  armPairs,
  armSummaries,
  cohenKappa,
  compareArms,
  incompleteBeta,
  meanCi,
  raterPairs,
  stratifiedSample,
  studentTCdf,
  studentTQuantile,
  twoTailedP,
} from './stats/index.js';
export type {
  Agreement,
  ArmComparison,
  ArmObservation,
  ArmPairRow,
  ArmSummary,
  MeanCi,
  PairAgreement,
  RatedItem,
  RunForStats,
  SamplePick,
  SnapshotForStats,
  StratifiedSample,
  Stratum,
} from './stats/index.js';
export { CsvSyntaxError, csvField, csvLine, parseCsv } from './csv.js';
export { parseEncoderArg, parseJudgeBlock } from './spec/posthoc-args.js';
export { isJudgeKind, judgeCalls, type JudgeCallsDef, type JudgeCallsInput, registerJudgeCalls } from './judge-calls.js';
export { BRIEFING_LINE, BROADCAST_LINE, briefingsOf, withBriefing, withBroadcast } from './briefing.js';
export { UNDOCUMENTED_COLUMN } from './publish/columns.js';
export {
  CARD_KEYS,
  cardHeader,
  CROISSANT_CONFORMS_TO,
  CROISSANT_REQUIRED,
  croissant,
  croissantType,
  datasetCard,
  sizeCategory,
  tableGlob,
  type PublishedTable,
  type PublishInfo,
} from './publish/metadata.js';
export {
  binderCumulant,
  bootstrapOverTrials,
  BOOTSTRAP_RESAMPLES,
  checkPlateau,
  checkTrials,
  chiSquarePerDofBound,
  curveCrossings,
  fittedCrossing,
  FIT_POINTS,
  CROSSING_RESAMPLES,
  curveExtremum,
  factualSpin,
  formatEstimate,
  formatTemperature,
  graphDistances,
  halvesDisagree,
  integratedAutocorrelationTime,
  parabolaVertex,
  phaseDiagram,
  plateauOf,
  plateauStart,
  pooledMoment,
  secondMomentLength,
  settledFor,
  SpatialCorrelation,
  susceptibility,
  trialsBound,
  TRIALS_SLACK,
  Z_EQUILIBRATION,
  Z95,
  type BootstrapInterval,
  type CurvePoint,
  type Estimate,
  type Located,
  type PhaseFamily,
  type PhasePoint,
  type PlateauCheck,
  type TrialsCheck,
} from './phase/index.js';
