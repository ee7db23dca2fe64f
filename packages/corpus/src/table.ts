import type { ScalarName } from './sql-type.js';

/**
 * A table's one declaration: its columns in file order, each a name, a DuckDB type and whether it may be
 * NULL. The SQL types the writer stages, the TypeScript row the producers build (RowOf) and the row the
 * readers get back (readRow) all come from it, so a column is added, renamed or retyped in one place.
 */

/** The column types a declared table may use: a scalar, a list of scalars or a fixed-size array of them. */
export type SqlTypeText = ScalarName | `${ScalarName}[]` | `${ScalarName}[${number}]`;

/** One column of a declared table. `values` narrows a VARCHAR to the strings it may hold. */
export interface ColumnDecl {
  readonly name: string;
  readonly type: SqlTypeText;
  /** NULL allowed (unknown, undefined, not applicable); the row type then admits null. */
  readonly nullable?: boolean;
  readonly values?: readonly string[];
  /** What the column means, and its unit where it has one: the dataset card (`panta publish`) says this. */
  readonly meaning?: string;
  /**
   * A column added after files of the table were first written: the value a reader takes where a file has
   * no such column (what those files' rows meant). Verifiers check it only where the file has it.
   */
  readonly absent?: unknown;
}

export interface TableDecl<C extends readonly ColumnDecl[] = readonly ColumnDecl[]> {
  /** The file's name without .parquet (runs, teams, ...), for messages. */
  readonly name: string;
  readonly columns: C;
}

interface ScalarValue {
  BOOLEAN: boolean;
  INTEGER: number;
  BIGINT: number;
  FLOAT: number;
  DOUBLE: number;
  VARCHAR: string;
  /** Written from a Date or epoch milliseconds; read back as a Date. */
  TIMESTAMP: Date | number;
}

/** The TypeScript value of a SQL type: lists and arrays hold their element's value or null. */
export type SqlValue<S extends string> = S extends keyof ScalarValue
  ? ScalarValue[S]
  : S extends `${infer E}[]`
    ? (SqlValue<E> | null)[]
    : S extends `${infer E}[${number}]`
      ? (SqlValue<E> | null)[]
      : never;

/** The value one column holds. */
export type ColumnValue<C extends ColumnDecl> =
  | (C extends { values: readonly (infer V)[] } ? V : SqlValue<C['type']>)
  | (C extends { nullable: true } ? null : never);

/** One row of a declared table: every column by name, with its value type. */
export type RowOf<T extends TableDecl> = ColumnsRow<T['columns']>;

/** RowOf for a bare column list (a group of columns shared by several tables). */
export type ColumnsRow<C extends readonly ColumnDecl[]> = { [K in C[number] as K['name']]: ColumnValue<K> };

/** True when A and B are the same type: `true satisfies Same<A, B>` checks a type kept elsewhere at compile time. */
export type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

/** True when every A is a B (a producer's type fits a declared row): `true satisfies Extends<A, B>`. */
export type Extends<A, B> = [A] extends [B] ? true : false;

/** Declares a table; `const` keeps each column's name and type literal so RowOf can map them. */
export function defineTable<const C extends readonly ColumnDecl[]>(name: string, columns: C): TableDecl<C> {
  return { name, columns };
}

/** Declares a group of columns that several tables spread in (the run's identity, the drift measures). */
export function defineColumns<const C extends readonly ColumnDecl[]>(columns: C): C {
  return columns;
}

/** The table without some of its columns: a reader that does not need them (or a source that lacks them). */
export function omitColumns<C extends readonly ColumnDecl[], const K extends C[number]['name']>(
  table: TableDecl<C>,
  names: readonly K[],
): TableDecl<Exclude<C[number], { name: K }>[]> {
  const drop = new Set<string>(names);
  return { name: table.name, columns: table.columns.filter((c) => !drop.has(c.name)) as Exclude<C[number], { name: K }>[] };
}

/**
 * One row as a reader gets it from `queryRows`, checked and typed by the declaration: numbers as numbers
 * (BIGINT included), NULL as null where the column is nullable. A column the file lacks (a file written
 * before the column existed) reads as its declared `absent` value, else as null when nullable. Throws, naming the table and column, on a NULL or
 * missing value where the declaration allows none, and on a string outside `values`.
 */
export function readRow<T extends TableDecl>(table: T, record: Readonly<Record<string, unknown>>): RowOf<T> {
  const row: Record<string, unknown> = {};
  for (const c of table.columns) {
    const v = record[c.name];
    if (v === undefined && c.absent !== undefined) {
      row[c.name] = c.absent;
      continue;
    }
    if (v === null || v === undefined) {
      if (!c.nullable) throw new Error(`${table.name}.parquet: column ${c.name} is ${v === null ? 'NULL' : 'missing'}`);
      row[c.name] = null;
      continue;
    }
    const value = readValue(c.type, v);
    if (c.values && !c.values.includes(value as string))
      throw new Error(`${table.name}.parquet: column ${c.name} holds ${JSON.stringify(value)}, not one of ${c.values.join(', ')}`);
    row[c.name] = value;
  }
  return row as RowOf<T>;
}

function readValue(type: string, v: unknown): unknown {
  const list = /^(.*)\[\d*\]$/.exec(type);
  if (list) return Array.from(v as ArrayLike<unknown>, (x) => (x === null || x === undefined ? null : readValue(list[1], x)));
  switch (type) {
    case 'VARCHAR':
      return String(v);
    case 'BOOLEAN':
      return v === true;
    case 'TIMESTAMP':
      return v instanceof Date ? v : new Date(Number(v));
    default:
      return Number(v);
  }
}

/**
 * The first of `columns` whose stored value differs from the expected one by `same` (a list element by
 * element), or undefined when all agree: what a verifier names when a stored row does not match its recomputation.
 */
export function firstDifference<C extends readonly ColumnDecl[]>(
  columns: C,
  expected: ColumnsRow<C>,
  stored: Readonly<Record<string, unknown>>,
  same: (a: unknown, b: unknown) => boolean,
): C[number]['name'] | undefined {
  const values = expected as Readonly<Record<string, unknown>>;
  const sameList = (a: unknown, b: unknown) => {
    const x = (a ?? []) as ArrayLike<unknown>;
    const y = (b ?? []) as ArrayLike<unknown>;
    return x.length === y.length && Array.from(x).every((v, i) => same(v, y[i]));
  };
  return columns.find((c) => !(c.type.endsWith(']') ? sameList : same)(values[c.name], stored[c.name]))?.name;
}
