import './allocator.js';
export { closeDuckDB, duckdbThreads, getConnection, getDuckDB, openConnection, readParquetSql, sqlIdent, sqlString, withConnection } from './duckdb.js';
export { CREATED_AT_COLUMN, EVENT_BASE_COLUMNS, columnListSql, embColumnName, eventColumns, validateEncoders, type ColumnDef } from './event-schema.js';
export { EventShardWriter, listParts, type EventShardWriterOptions } from './event-shard-writer.js';
export { runsOnDisk, shardProgress, type ShardProgress } from './shard-progress.js';
export { readEvents, type ColumnBatch, type ColumnValues, type ReadEventsOptions } from './event-reader.js';
export { queryRows, writeParquetTable, type TableData } from './parquet-table.js';
export {
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
  validateRunId,
  whiteningDir,
} from './corpus-paths.js';
export { RUN_COLUMNS, type RunTableRow } from './run-table-schema.js';
export { parseSqlType, sqlTypeText, type SqlType } from './sql-type.js';
export * from './manifest.js';
export * from './run-journal.js';
export * from './verify.js';
export * from './measure/whitening-io.js';
export * from './measure/order-params-io.js';
export * from './measure/sweep-measure.js';
export * from './live-status.js';
export * from './control-journal.js';
export * from './measure/sweep-trace.js';
export { acquireOutLock, outLockPath, type OutLock, type OutLockHolder } from './out-lock.js';
