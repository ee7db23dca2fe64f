import { DuckDBInstance } from '@duckdb/node-api';
const inst = await DuckDBInstance.create(':memory:', { threads: '1' });
const c = await inst.connect();
const N = 50000;
await c.run(`CREATE TABLE t AS SELECT i::BIGINT AS event, list_transform(range(384), x -> (random()*2-1)::FLOAT)::FLOAT[384] AS e FROM range(${N}) r(i)`);
console.error('ready');
for (let k = 0; k < 6; k++) await c.run(`COPY t TO '/tmp/exp/o.parquet' (FORMAT parquet, COMPRESSION uncompressed, ROW_GROUP_SIZE 2048)`);
