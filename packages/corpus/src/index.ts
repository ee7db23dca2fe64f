export { closeDuckDB, duckdbThreads, getConnection, getDuckDB, openConnection, readParquetSql, sqlIdent, sqlString, withConnection } from './duckdb.js';
export { CREATED_AT_COLUMN, EVENT_BASE_COLUMNS, columnListSql, embColumnName, eventColumns, validateEncoders, type ColumnDef } from './event-schema.js';
export { EventShardWriter, listParts, type EventShardWriterOptions } from './event-shard-writer.js';
export { shardProgress, type ShardProgress } from './shard-progress.js';
export { readEvents, type ColumnBatch, type ColumnValues, type ReadEventsOptions } from './event-reader.js';
export { queryRows, writeParquetTable, type TableData } from './parquet-table.js';
export { eventsDir, partPath, partsDir, shardPath, validateRunId } from './corpus-paths.js';
export { parseSqlType, sqlTypeText, type SqlType } from './sql-type.js';
