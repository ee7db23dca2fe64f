import { armCount } from './arms.js';
import { InputError } from '../errors.js';
import { maxTemperatureCount } from './temperatures.js';
import { geometryLabel, nominalDegree, type GeometrySpec } from '../geometry/index.js';
import type { SweepSpec } from './schema.js';

/**
 * Most events one run may have. Nothing in a run is held per event of the whole run (the planner keeps rings
 * of the look-ahead window; the sweep trace has a budget past which shards are read back), so this is a
 * sanity bound on one shard's rows: memory is checked per agent by checkMemoryBudget.
 */
export const MAX_RUN_EVENTS = 2 ** 30;

/**
 * Most neighbour entries (N x k) one run's graph may have: a static graph stores them as Int32 (1 GiB at
 * this bound) and a full mean field reads N - 1 answers per event, N^2 per sweep.
 */
export const MAX_GRAPH_ENTRIES = 2 ** 28;

/** Most runs a sweep may plan: each is an object in memory, a shard file and a row of runs.parquet. */
export const MAX_RUNS = 1_000_000;

/**
 * Most sweeps of a run: a run holds state per sweep (its order-parameter rows, its control history, carried
 * in tasks and journals), and 2,097,151 sweeps of the smallest population (N = 2) is a run measured to complete.
 */
export const MAX_SWEEPS = 2 ** 21 - 1;

const fmt = (x: number) => x.toLocaleString('en-US');

/** The sizes a geometry runs at and the field that lists them (an edge list's size comes from its file). */
export function sizesOf(spec: SweepSpec, geometry: GeometrySpec, fileSize: (path: string) => number): { sizes: number[]; field: string } {
  if (Array.isArray(spec.sizes)) return { sizes: spec.sizes, field: 'sizes' };
  const label = geometryLabel(geometry);
  const key = label in spec.sizes ? label : geometry.kind;
  const entry = spec.sizes[key];
  if (entry) return { sizes: entry, field: `sizes.${key}` };
  return geometry.kind === 'edges' ? { sizes: [fileSize(geometry.path)], field: `geometries` } : { sizes: [], field: 'sizes' };
}

/**
 * Refuses, before anything is planned or allocated, a grid whose runs could not be held: more than
 * MAX_RUNS runs, a run of more than MAX_RUN_EVENTS events, or a graph of more than MAX_GRAPH_ENTRIES
 * neighbour entries. `prompts` is the number of prompts selected; `fileSize` an edge list's node count.
 */
export function checkSweepBounds(spec: SweepSpec, prompts: number, file: string, fileSize: (path: string) => number): void {
  const protocols = (Array.isArray(spec.protocol) ? spec.protocol.length : 1) * armCount(spec);
  let configs = 0;
  for (const geometry of spec.geometries) {
    const { sizes, field } = sizesOf(spec, geometry, fileSize);
    configs += sizes.length;
    const label = geometryLabel(geometry);
    sizes.forEach((n, i) => {
      const events = (spec.sweeps + 1) * n;
      if (events > MAX_RUN_EVENTS) {
        const most = Math.floor(MAX_RUN_EVENTS / n) - 1;
        throw most >= 1
          ? new InputError(
              file,
              'sweeps',
              `${fmt(spec.sweeps)} sweeps of N = ${fmt(n)} (${label}) make ${fmt(events)} events per run, more than a run can hold (${fmt(MAX_RUN_EVENTS)})`,
              `use at most ${fmt(most)} sweeps at this size, or a smaller size`,
            )
          : new InputError(
              file,
              `${field}[${i}]`,
              `N = ${fmt(n)} makes more than ${fmt(MAX_RUN_EVENTS)} events per run, more than a run can hold`,
              `use a size of at most ${fmt(MAX_RUN_EVENTS / 2)}`,
            );
      }
      if (geometry.kind === 'edges' || (geometry.kind === 'meanfield' && geometry.sample !== undefined)) return;
      const entries = n * nominalDegree(geometry, n);
      if (entries > MAX_GRAPH_ENTRIES) {
        throw new InputError(
          file,
          `${field}[${i}]`,
          `N = ${fmt(n)} on ${label} makes ${fmt(entries)} neighbour entries (N x k), more than a graph can hold (${fmt(MAX_GRAPH_ENTRIES)})`,
          'use a smaller size or degree',
        );
      }
    });
  }
  const runs = prompts * configs * maxTemperatureCount(spec.temperatures) * protocols * spec.trials;
  if (runs > MAX_RUNS) {
    throw new InputError(
      file,
      spec.trials > 1 ? 'trials' : '',
      `the grid makes ${fmt(runs)} runs (prompts x sizes over geometries x temperatures x protocols x trials), more than a sweep can hold (${fmt(MAX_RUNS)})`,
      'use fewer trials or grid values, or split the grid into several sweeps',
    );
  }
}
