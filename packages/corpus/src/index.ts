import './allocator.js';
export {
  closeDuckDB,
  duckdbThreads,
  getConnection,
  getDuckDB,
  openConnection,
  readParquetSql,
  sqlIdent,
  sqlString,
  withConnection,
} from './duckdb.js';
export {
  CREATED_AT_COLUMN,
  EVENT_BASE_COLUMNS,
  RUN_ID_COLUMNS,
  columnListSql,
  embColumn,
  embColumnName,
  eventColumns,
  validateEncoders,
  type ColumnDef,
} from './event-schema.js';
export { EventShardWriter, listParts, type EventShardWriterOptions } from './event-shard-writer.js';
export { runsOnDisk, shardProgress, type ShardProgress } from './shard-progress.js';
export { readEvents, type ColumnBatch, type ColumnValues, type ReadEventsOptions } from './event-reader.js';
export { queryRows, writeParquetTable, type TableData } from './parquet-table.js';
export { adaptiveRuns, nextGrids, replayGrids, runSeriesOf } from './adaptive-grids.js';
export type { AdaptivePlanInput } from './adaptive-grids.js';
export {
  defineColumns,
  defineTable,
  firstDifference,
  omitColumns,
  readRow,
  type ColumnDecl,
  type ColumnsRow,
  type ColumnValue,
  type Extends,
  type RowOf,
  type Same,
  type SqlTypeText,
  type SqlValue,
  type TableDecl,
} from './table.js';
export {
  annotationPath,
  CORPUS_FILES,
  controlDir,
  controlJournalPath,
  defaultReportDir,
  eventsDir,
  judgeCachePath,
  logPath,
  orderParamsPath,
  partPath,
  partsDir,
  partsRoot,
  runJournalPath,
  runsTablePath,
  shardName,
  shardPath,
  stateDir,
  phaseTablePath,
  statsTablePath,
  tauCalibrationPath,
  tmpName,
  teamsTablePath,
  validateRunId,
  whiteningDir,
} from './corpus-paths.js';
export {
  type AddedTable,
  addedTables,
  CORPUS_TABLES,
  declaredMeaning,
  registerTable,
  type RubricJudge,
} from './corpus-tables.js';
export { runDriftColumns, UNMEASURED_DRIFT, type RunDriftColumns } from './run-drift.js';
export { RUN_DRIFT_COLUMNS, RUN_STATUSES, RUNS_TABLE, type RunTableRow } from './run-table-schema.js';
export { STATS_TABLE, type StatsTableRow } from './stats-table-schema.js';
export {
  checkPhaseTable,
  computePhaseRows,
  PHASE_TABLE,
  phaseRows,
  type PhaseRow,
  readPhaseTable,
  spinDimensions,
  spinDimKey,
  writePhaseTable,
} from './measure/phase-table.js';
export { JUDGE_VERDICTS, TEAMS_TABLE, type TeamTableRow } from './team-table-schema.js';
export { teamDriftByRun, teamTableRows, type TeamRunDrift } from './team-table.js';
export { parseSqlType, sqlTypeText, type SqlType } from './sql-type.js';
export {
  CORPUS_FORMAT,
  manifestDigest,
  manifestDigestMismatches,
  manifestPath,
  readManifest,
  readManifestToResume,
  sha256File,
  writeManifest,
} from './manifest.js';
export type { Manifest, ShardInfo, WhiteningOrigin } from './manifest.js';
export { appendRunRecord, readRunRecords } from './run-journal.js';
export type { RunRecord } from './run-journal.js';
export { verifyCorpus } from './verify.js';
export { checkPublished, corpusTables, publishCorpus, type PublishOptions } from './publish.js';
export { checkTeamShard } from './verify-team.js';
export type { VerifyReport } from './verify.js';
export { copyWhitening, fitShardWhitening, readWhitening, whiteningPath, whiteningTable, writeWhitening } from './measure/whitening-io.js';
export {
  ORDER_PARAMS_TABLE,
  RunMeasurer,
  measureRunShard,
  measureRunTrace,
  measuredCache,
} from './measure/order-params-io.js';
export type { Measured, OrderParamRow } from './measure/order-params-io.js';
export { measureSweep } from './measure/sweep-measure.js';
export type { MeasuredRun, SweepMeasurement, WhiteningMode } from './measure/sweep-measure.js';
export { liveStatusPath, readLiveStatus, writeLiveStatus } from './live-status.js';
export type { LiveStatus } from './live-status.js';
export { appendBoundary, readBoundaries } from './control-journal.js';
export type { BoundaryRecord } from './control-journal.js';
export { RunTrace, SweepTrace } from './measure/sweep-trace.js';
export type { SealedRun } from './measure/sweep-trace.js';
export { acquireOutLock, outLockPath, type OutLock, type OutLockHolder } from './out-lock.js';
export {
  judgeDir,
  judgeOrderParamsPath,
  judgeRunsTablePath,
  parsePosthocJournalName,
  posthocDir,
  posthocJournalPath,
  posthocJudgeCachePath,
} from './corpus-paths.js';
export { tagColumn, tagColumnName } from './event-schema.js';
export type { PosthocJudge } from './manifest.js';
export { parquetColumnNames, shardColumnOrder, writeShardColumn } from './shard-columns.js';
export {
  readPosthocJournal,
  recordPosthocDone,
  removePosthocJournal,
  startPosthocJournal,
  type PosthocJournal,
} from './posthoc-journal.js';
export {
  judgeOrderParams,
  judgeRunDrift,
  readOrderParams,
  runTagSnapshots,
  writeJudgeTables,
  type RunDrift,
} from './measure/judge-measure.js';
