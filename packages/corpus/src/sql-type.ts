import duckdb from '@duckdb/node-bindings';
import type { DuckDBType, DuckDBTypeId } from '@duckdb/node-api';
import { duckdbApi } from './duckdb-api.js';

/** The scalar types the corpus writes. Everything else is refused up front rather than mis-encoded. */
export const SCALAR_TYPES = ['BOOLEAN', 'INTEGER', 'BIGINT', 'FLOAT', 'DOUBLE', 'VARCHAR', 'TIMESTAMP'] as const;
export type ScalarName = (typeof SCALAR_TYPES)[number];

/**
 * A column type as the vector codecs see it: a scalar, a variable-length LIST (`T[]`) or a fixed-size
 * ARRAY (`T[d]`). Parsed once per column so the per-chunk code switches on a tag, not on strings.
 */
export type SqlType =
  | { kind: 'scalar'; name: ScalarName }
  | { kind: 'list'; child: SqlType }
  | { kind: 'array'; child: SqlType; size: number };

/** Bytes per value of the fixed-width scalars (VARCHAR's slot is a 16-byte duckdb_string_t). */
export const SCALAR_BYTES: Record<ScalarName, number> = {
  BOOLEAN: 1,
  INTEGER: 4,
  BIGINT: 8,
  FLOAT: 4,
  DOUBLE: 8,
  VARCHAR: 16,
  TIMESTAMP: 8,
};

const ALIASES: Record<string, ScalarName> = {
  BOOL: 'BOOLEAN',
  INT: 'INTEGER',
  INT4: 'INTEGER',
  INT8: 'BIGINT',
  LONG: 'BIGINT',
  REAL: 'FLOAT',
  FLOAT4: 'FLOAT',
  FLOAT8: 'DOUBLE',
  TEXT: 'VARCHAR',
  STRING: 'VARCHAR',
  DATETIME: 'TIMESTAMP',
};

/** Parses `INTEGER`, `DOUBLE[]`, `FLOAT[384]`, `VARCHAR[][]`... (case-insensitive). */
export function parseSqlType(text: string): SqlType {
  const t = text.trim().toUpperCase();
  const m = /^(.*)\[(\d*)\]$/.exec(t);
  if (m) {
    const child = parseSqlType(m[1]);
    if (m[2] === '') return { kind: 'list', child };
    const size = Number(m[2]);
    if (!Number.isSafeInteger(size) || size <= 0) throw new Error(`bad array size in type ${JSON.stringify(text)}`);
    return { kind: 'array', child, size };
  }
  const name = (SCALAR_TYPES as readonly string[]).includes(t) ? (t as ScalarName) : ALIASES[t];
  if (!name) throw new Error(`unsupported column type ${JSON.stringify(text)} (supported: ${SCALAR_TYPES.join(', ')}, T[], T[d])`);
  return { kind: 'scalar', name };
}

/** The canonical SQL spelling, as used in CREATE TABLE. */
export function sqlTypeText(t: SqlType): string {
  if (t.kind === 'scalar') return t.name;
  if (t.kind === 'list') return `${sqlTypeText(t.child)}[]`;
  return `${sqlTypeText(t.child)}[${t.size}]`;
}

const SCALAR_TYPE_IDS: Record<ScalarName, duckdb.Type> = {
  BOOLEAN: duckdb.Type.BOOLEAN,
  INTEGER: duckdb.Type.INTEGER,
  BIGINT: duckdb.Type.BIGINT,
  FLOAT: duckdb.Type.FLOAT,
  DOUBLE: duckdb.Type.DOUBLE,
  VARCHAR: duckdb.Type.VARCHAR,
  TIMESTAMP: duckdb.Type.TIMESTAMP,
};

/** A raw logical type for `create_data_chunk`. */
export function toLogicalType(t: SqlType): duckdb.LogicalType {
  if (t.kind === 'scalar') return duckdb.create_logical_type(SCALAR_TYPE_IDS[t.name]);
  if (t.kind === 'list') return duckdb.create_list_type(toLogicalType(t.child));
  return duckdb.create_array_type(toLogicalType(t.child), t.size);
}

/** Built on first use: the type ids are the API's, loaded with DuckDB (duckdb-api.ts). */
let fromTypeId: Partial<Record<DuckDBTypeId, ScalarName>> | undefined;

/** The SqlType of a result column, or undefined when the fast codecs do not cover it. */
export function fromDuckDBType(t: DuckDBType): SqlType | undefined {
  const { DuckDBTypeId } = duckdbApi();
  fromTypeId ??= {
    [DuckDBTypeId.BOOLEAN]: 'BOOLEAN',
    [DuckDBTypeId.INTEGER]: 'INTEGER',
    [DuckDBTypeId.BIGINT]: 'BIGINT',
    [DuckDBTypeId.FLOAT]: 'FLOAT',
    [DuckDBTypeId.DOUBLE]: 'DOUBLE',
    [DuckDBTypeId.VARCHAR]: 'VARCHAR',
    [DuckDBTypeId.TIMESTAMP]: 'TIMESTAMP',
  };
  if (t.typeId === DuckDBTypeId.LIST) {
    const child = fromDuckDBType(t.valueType);
    return child && { kind: 'list', child };
  }
  if (t.typeId === DuckDBTypeId.ARRAY) {
    const child = fromDuckDBType(t.valueType);
    return child && { kind: 'array', child, size: t.length };
  }
  const name = fromTypeId[t.typeId];
  return name && { kind: 'scalar', name };
}
