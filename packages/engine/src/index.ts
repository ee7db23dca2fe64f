export type {
  BoundaryOutcome,
  BoundaryTask,
  CallOutcome,
  CallResult,
  EventOutcome,
  EventTask,
  Task,
  Transport,
  TransportMessage,
} from './task.js';
export { agentPersona, callModel, callOutcome, callSeed, controlEncoder } from './execute-call.js';
export { executeEvent } from './execute-event.js';
export type { WorkerServices } from './execute-call.js';
export { InProcessTransport } from './in-process-transport.js';
export { RunRecorder } from './run-recorder.js';
export type { RowMeta, RunControlState, RunTally } from './run-recorder.js';
export { SweepCorpus, readVersionTexts, runEnd } from './sweep-corpus.js';
export type { RunEnd } from './sweep-corpus.js';
export { Executor } from './executor.js';
export type { ActiveRun, ExecutorOptions, ExecutorProgress, OpenRunProgress, RunSink } from './executor.js';
export { corpusIdentity, loadSweep, memoryAvailable, plannerFor } from './load.js';
export type { LoadedSweep, SweepOverrides } from './load.js';
export { backendMeta, batchInvariant, codeVersion, finishSweep, judgeMeta, startManifest, sweepMeta } from './finish.js';
export type { SummaryRow, SweepMeta, SweepSummary } from './finish.js';
export { BUFFER_BUDGET_BYTES, callsAreSlow, openEncoders, runSweep, sweepSizing } from './sweep.js';
export { chainsFirst } from './run-order.js';
export { adaptiveOf, adoptGrids, gridsRecord, nextRound, recordRounds } from './adaptive-rounds.js';
export type { RunSweepOptions, SweepNotice, SweepProgress } from './sweep.js';
export { humanLogLine, logFormat, roleLogger, sweepLogger, type LogFormat } from './log.js';
export type { Logger } from './log.js';
export { LiveStatusWriter } from './live-status.js';
export { executeBoundary } from './execute-boundary.js';
export { checkOutFolder, makeOutFolder } from './out-folder.js';
export { corpusToResume, workerServices } from './sweep-setup.js';
export { mergeParts, mergeTempFolder, removeMergeLeftovers } from './merge.js';
export type { MergeOptions } from './merge.js';
export { readParts, type PartFolder } from './merge-parts.js';
export { embedCorpus, type EmbedCorpusOptions, type PosthocSummary } from './posthoc-embed.js';
export { defaultJudgeName, judgeCorpus, type JudgeCorpusOptions } from './posthoc-judge.js';
export type { PosthocProgress } from './posthoc-corpus.js';
export { calibrateCorpus, readArmCds, resolveTau, type TauCalibrationRecord } from './tau-calibration.js';
