import { InputError } from '../errors.js';
import { geometryLabel, nominalDegree } from '../geometry/index.js';
import { sizesOf } from './bounds.js';
import type { SweepSpec } from './schema.js';

/**
 * The memory model of a sweep run by one process, in bytes: what `panta run` refuses against before
 * anything is planned. These are the budgets of the engine's structures (one place: README "## Scale"
 * quotes them), not measurements: bench/scale.mjs measures peak RSS, whose marginal bytes per agent must
 * stay below agentBytes for the refusal to be right.
 */
export const MEMORY = {
  /**
   * Node, V8 and DuckDB (~115 MB), the hashing encoder's memo (32 MiB), the open runs' row buffers (64 MiB
   * at most, shared), the Parquet encodings in progress (two, ~35 MB each), the sweep trace (256 MiB at most;
   * past it the final measurement reads shards back), and the garbage V8 holds between collections.
   */
  processBytes: 768 * 2 ** 20,
  /** Per agent of an open run: its typed-array state (versions, answers' ids, tags, per-sweep sums) and its latest answer's text. */
  agentBytes: 2048,
  /** Per neighbour entry (N x k) of a static graph: Int32 offsets and neighbours. */
  graphEntryBytes: 4,
  /** Per event of look-ahead of an open run: the planner's window (~44 B) and a result waiting to be written (~2 KB). */
  lookaheadBytes: 2112,
  /** Per call in flight: its task, prompt and reply (the neighbours' answers are counted by quotedAnswerBytes). */
  inflightBytes: 16 * 1024,
  /** Per neighbour answer quoted in a prompt in flight (a few hundred characters, UTF-16). */
  quotedAnswerBytes: 1024,
  /** Share of the machine's memory (and of V8's heap limit) a sweep may plan to use: the rest is the system's and other processes'. */
  usableShare: 0.9,
  /**
   * Of the above, what lives on V8's heap, whose limit (about 4 GiB by default) stops a process long before
   * the machine's memory does: per agent its latest answer's text and its entry in the version store; per
   * open run the results waiting to be written (per event of look-ahead); the process's own objects. Typed
   * arrays are outside the heap.
   */
  heapAgentBytes: 512,
  heapLookaheadBytes: 2048,
  heapProcessBytes: 64 * 2 ** 20,
} as const;

/** Runs open at once when one run's events already fill the concurrency: it, and the next one opening as it ends. */
const LARGE_RUN_OPEN = 2;

/** Where the memory a sweep may use comes from, for the message. */
export interface MemoryAvailable {
  bytes: number;
  /** e.g. "this machine's 23.5 GiB" or "memory_budget 8 GiB". */
  source: string;
  /** V8's heap limit of this process (v8.getHeapStatistics().heap_size_limit). */
  heapBytes: number;
}

/** 1.5 GiB, 512 MiB: binary units, one decimal above 10 of the unit. */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let v = bytes;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v >= 10 || u === 0 || Number.isInteger(v) ? Math.round(v) : v.toFixed(1)} ${units[u]}`;
}

const UNIT: Record<string, number> = { B: 1, KB: 1e3, MB: 1e6, GB: 1e9, TB: 1e12, KIB: 2 ** 10, MIB: 2 ** 20, GIB: 2 ** 30, TIB: 2 ** 40 };

/** Bytes of a memory_budget value: a number of bytes, or "16 GiB", "512MB". */
export function parseMemoryBudget(value: number | string): number | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value > 0 ? value : undefined;
  const m = /^\s*(\d+(?:\.\d+)?)\s*([KMGT]i?B|B)\s*$/i.exec(value);
  if (!m) return undefined;
  const bytes = Math.floor(Number(m[1]) * UNIT[m[2].toUpperCase()]);
  return bytes > 0 && Number.isSafeInteger(bytes) ? bytes : undefined;
}

/** Bytes one open run of N agents with k neighbours each holds. */
function runBytes(spec: SweepSpec, n: number, k: number, staticGraph: boolean): number {
  const events = (spec.sweeps + 1) * n;
  return (
    n * MEMORY.agentBytes + (staticGraph ? n * k * MEMORY.graphEntryBytes : 0) + Math.min(spec.lookahead, events) * MEMORY.lookaheadBytes
  );
}

/** Runs open at once: runs whose events fill the concurrency one and the next; smaller runs up to the engine's 64. */
function openRuns(spec: SweepSpec, n: number, runs: number): number {
  return n >= spec.concurrency ? Math.min(LARGE_RUN_OPEN, runs) : Math.min(runs, 64, Math.max(2, Math.ceil(spec.concurrency / 2)));
}

/** Calls in flight with the answers their prompts quote (on the heap too). */
function inflightBytes(spec: SweepSpec, k: number): number {
  return spec.concurrency * (MEMORY.inflightBytes + k * MEMORY.quotedAnswerBytes);
}

/**
 * The memory a sweep is estimated to need at one size, `runs` runs of N agents with k neighbours: the
 * process, the runs open at once, and the calls in flight. `heap`: the part of it on V8's heap.
 */
export function sweepMemoryBytes(
  spec: SweepSpec,
  n: number,
  k: number,
  staticGraph: boolean,
  runs: number,
): { total: number; heap: number } {
  const open = openRuns(spec, n, runs);
  const inflight = inflightBytes(spec, k);
  const lookahead = Math.min(spec.lookahead, (spec.sweeps + 1) * n);
  return {
    total: MEMORY.processBytes + open * runBytes(spec, n, k, staticGraph) + inflight,
    heap: MEMORY.heapProcessBytes + open * (n * MEMORY.heapAgentBytes + lookahead * MEMORY.heapLookaheadBytes) + inflight,
  };
}

const fmt = (x: number) => x.toLocaleString('en-US');

/**
 * Refuses, before anything is planned or allocated, a size whose runs would not fit the memory available
 * (the machine's, its cgroup's, or the spec's memory_budget): one line naming the size, the estimate, and
 * the largest size of that geometry that fits. `runsPerSize` is the number of runs at one size of one
 * geometry (prompts x temperatures x protocols x trials).
 */
export function checkMemoryBudget(
  spec: SweepSpec,
  runsPerSize: number,
  file: string,
  fileSize: (path: string) => number,
  available: MemoryAvailable,
): void {
  const usable = available.bytes * MEMORY.usableShare;
  const heapUsable = available.heapBytes * MEMORY.usableShare;
  const pct = `${Math.round(MEMORY.usableShare * 100)}%`;
  for (const geometry of spec.geometries) {
    const { sizes, field } = sizesOf(spec, geometry, fileSize);
    const label = geometryLabel(geometry);
    const staticGraph = geometry.kind !== 'meanfield' || geometry.sample === undefined;
    // An edge list's degree is its own: counted as 8 (its entries are parsed and held by then anyway).
    const at = (m: number) =>
      sweepMemoryBytes(spec, m, geometry.kind === 'edges' ? 8 : nominalDegree(geometry, m), staticGraph, runsPerSize);
    sizes.forEach((n, i) => {
      const need = at(n);
      const memory = need.total > usable;
      if (!memory && need.heap <= heapUsable) return;
      const fits = (m: number) => {
        const x = at(m);
        return x.total <= usable && x.heap <= heapUsable;
      };
      let lo = 0;
      let hi = n;
      while (hi - lo > 1) {
        const mid = Math.floor((lo + hi) / 2);
        if (fits(mid)) lo = mid;
        else hi = mid;
      }
      const other = staticGraph && geometry.kind === 'meanfield' ? ' (or {kind: meanfield, sample: k})' : '';
      const smaller =
        lo >= 2
          ? `use a size of at most ${fmt(lo)} on ${label}${other}, or less concurrency`
          : 'use less concurrency or a smaller lookahead';
      const problem = memory
        ? `N = ${fmt(n)} on ${label} needs about ${formatBytes(need.total)} of memory (${fmt(MEMORY.agentBytes)} bytes per agent of each open run, ${formatBytes(MEMORY.processBytes)} for the process), more than ${pct} of ${available.source}`
        : `N = ${fmt(n)} on ${label} needs about ${formatBytes(need.heap)} of Node's heap (${MEMORY.heapAgentBytes} bytes per agent of each open run), more than ${pct} of its limit of ${formatBytes(available.heapBytes)}`;
      const raise = memory
        ? 'set memory_budget if this process may use more'
        : `raise the limit (NODE_OPTIONS=--max-old-space-size=${Math.ceil(need.heap / MEMORY.usableShare / 2 ** 20)})`;
      throw new InputError(file, `${field}[${i}]`, problem, `${smaller}; or ${raise}`);
    });
  }
}
