import { armOf, callsDebate, eventSeed, goldVerdictOf, isDrift, keptReads, solutionWinner, teamCalls, type RunPlan } from '@panta/core';
import { readParquetSql } from './duckdb.js';
import { queryRows } from './parquet-table.js';
import { checkTeamBoard } from './verify-team-board.js';

function same(a: ArrayLike<number>, b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < b.length; i++) if (Number(a[i]) !== b[i]) return false;
  return true;
}

/**
 * A team run's shard against its schedule (docs/teams.md), recomputed from the spec and seeds: one row per
 * call, in event order, with the call's role, step, member, seed, and exactly its read set (read_versions
 * and neighbours); a call that waits on a verdict skipped exactly when that verdict (read from the shard)
 * found no drift, a debater's call (down) skipped exactly when the reply it reads calls no debate; each
 * solution the plurality of its kept votes, ties broken by its seed, with the winner's contribution as its response.
 */
export async function checkTeamShard(file: string, run: RunPlan): Promise<string | null> {
  const calls = teamCalls(run);
  const rows = await readTeamRows(file, run);
  if (typeof rows === 'string') return rows;
  if (rows.length !== calls.length) return `${run.runId}: ${rows.length} rows, but its ${run.dynamics} schedule has ${calls.length} calls`;
  for (const call of calls) {
    const row = rows[call.event];
    const where = `${run.runId}: event ${call.event} (${call.role}, step ${call.sweep})`;
    if (row.role !== call.role || row.sweep !== call.sweep || row.seed !== eventSeed(run.seed, call.event))
      return `${where} is not the schedule's call (row: ${row.role}, step ${row.sweep}, seed ${row.seed})`;
    if (call.role !== 'solution' && row.agent !== call.agent) return `${where}: agent ${row.agent}, the schedule says ${call.agent}`;
    const reads = call.reads.map((r) => r.event);
    if (
      !same(row.reads, reads) ||
      !same(
        row.neighbours,
        call.reads.map((r) => r.agent),
      )
    )
      return `${where} read [${row.reads.join(', ')}], its read set is [${reads.join(', ')}]`;
    const drift = new Map<number, boolean>();
    for (const r of call.reads) if (r.kind === 'verdict') drift.set(r.turn, isDrift(rows[r.event].response));
    if (call.onDemandOf !== undefined) {
      const demanded = callsDebate(rows[call.onDemandOf].response);
      if (demanded === (row.status === 'skipped'))
        return `${where} is ${row.status === 'skipped' ? 'skipped' : 'made'}, but the reply of event ${call.onDemandOf} ${demanded ? 'calls a' : 'calls no'} debate`;
    }
    const made = call.onDriftOf === undefined || drift.get(call.sweep) === true;
    if (call.onDemandOf === undefined && made === (row.status === 'skipped'))
      return `${where} is ${row.status === 'skipped' ? 'skipped' : 'made'}, but the verdict of event ${call.onDriftOf} says ${made ? 'drift' : 'no drift'}`;
    if (call.role === 'drift-judge' && armOf(run.protocol).judge === 'gold') {
      const kept = keptReads(
        call.reads,
        call.reads.map((r) => rows[r.event].response),
        (t) => drift.get(t) ?? false,
      );
      if (row.response !== goldVerdictOf(run.prompt, kept)) return `${where}: the gold verdict is not the row's (${row.response})`;
    }
    if (call.role === 'solution' && made) {
      const kept = keptReads(
        call.reads,
        call.reads.map((r) => rows[r.event].response),
        (t) => drift.get(t) ?? false,
      );
      const winner = solutionWinner(run, kept, row.seed);
      const text = kept.find((k) => k.read.kind === 'contribution' && k.read.agent === winner)?.text ?? '';
      const extracted = run.controls.team?.solution === 'extracted';
      if (row.agent !== winner || (!extracted && row.response !== text))
        return `${where}: the votes elect participant ${winner}, the row says ${row.agent}`;
    }
  }
  return checkTeamBoard(run, calls, rows);
}

/** A team shard's rows as verify reads them (the schedule's columns), or the line saying why they are not one per call. */
interface TeamRow {
  role: string;
  sweep: number;
  agent: number;
  seed: number;
  neighbours: number[];
  reads: number[];
  response: string;
  status: string;
  board: string | null;
}

async function readTeamRows(file: string, run: RunPlan): Promise<TeamRow[] | string> {
  const rows: TeamRow[] = [];
  // A team run is a few dozen rows: read whole, in file order.
  const read = await queryRows(
    `SELECT event::DOUBLE AS event, role, sweep, agent, seed::DOUBLE AS seed, neighbours::DOUBLE[] AS neighbours, read_versions::DOUBLE[] AS reads, response, reply_status, board FROM ${readParquetSql([file])}`,
  );
  for (const r of read) {
    const event = Number(r.event);
    if (event !== rows.length)
      return `${run.runId}: row ${rows.length} holds event ${event} (a team run has one row per call, in event order)`;
    rows.push({
      role: String(r.role),
      sweep: Number(r.sweep),
      agent: Number(r.agent),
      seed: Number(r.seed),
      neighbours: ((r.neighbours as number[] | null) ?? []).map(Number),
      reads: ((r.reads as number[] | null) ?? []).map(Number),
      response: String(r.response ?? ''),
      status: String(r.reply_status),
      board: r.board === null || r.board === undefined ? null : String(r.board),
    });
  }
  return rows;
}
