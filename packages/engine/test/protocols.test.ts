import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  BOARD_INSTRUCTION,
  CONTEXT_MERGE_INSTRUCTION,
  MERGE_NOTE,
  PROTOCOL_SYSTEM,
  SUMMARY_INSTRUCTION,
  assignPopulation,
  divergence,
  foldLive,
  parseDataset,
  renderEntries,
  type BoardEntry,
  type ChatMessages,
  type PromptContext,
} from '@panta/core';
import { queryRows, verifyCorpus } from '@panta/corpus';
import { HashingEncoder } from '@panta/embed';
import { startSurrogateServer, type LlmBackend } from '@panta/llm';
import { RHEON6, tempDir, writeSpec } from '../../../test/helpers.js';
import { InProcessTransport, runSweep } from '../src/index.js';

const BELIEFS = '{"id": "wrong-97", "belief": "97"}\n{"id": "wrong-95", "belief": "95"}\n';

/** Engine tests run on the surrogate with no task knowledge (a scenario's replies are calibration's business). */
const SPEC = (backend = 'backend: {kind: surrogate, scenario: neutral}\n') => `name: protocols
dataset: ${RHEON6}
prompts: [fq367]
geometries: [ring, meanfield, chain, star]
sizes: [16]
temperatures: [0.4, 1.0]
trials: 1
sweeps: 4
seed: 5
protocol: [isolated, glauber, ssvp, belief-board, drift-policy]
ssvp: {tau: 0.2}
population: {file: beliefs.jsonl, assign: fraction, fraction: 0.25}
${backend}`;

type Row = Record<string, unknown> & { run_id: string; event: number; role: string; agent: number; sweep: number; response: string };

/** A backend that remembers every request it answers, keyed by the seed it was sent (unique per call). */
function recording(
  inner: LlmBackend,
  seen: Map<number, { messages: ChatMessages; context: PromptContext; temperature: number }>,
): LlmBackend {
  return {
    kind: inner.kind,
    model: inner.model,
    async complete(request) {
      seen.set(request.seed, { messages: request.messages(), context: request.context!, temperature: request.temperature });
      return inner.complete(request);
    },
    close: () => inner.close(),
  };
}

async function rows(out: string): Promise<Row[]> {
  const all = await queryRows(
    `SELECT * EXCLUDE (latency_ms, created_at, emb_hashing) FROM read_parquet('${out}/events/*.parquet') ORDER BY run_id, event, role <> 'judge', role <> 'moderator', role <> 'merge'`,
  );
  return all.map((r) => ({ ...r, event: Number(r.event), agent: Number(r.agent), sweep: Number(r.sweep) }) as Row);
}

type Seen = Map<number, { messages: ChatMessages; context: PromptContext; temperature: number }>;

/**
 * SPEC swept once for the file, at concurrency 64, through a backend that remembers every request (a pass-through:
 * the rows are the plain in-process sweep's). The tests read it: against concurrency 1, for the prompts each
 * protocol sends, against the served surrogate.
 */
let recorded: Promise<{ out: string; seen: Seen }> | undefined;
function recordedSweep(): Promise<{ out: string; seen: Seen }> {
  recorded ??= (async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'beliefs.jsonl'), BELIEFS);
    const seen: Seen = new Map();
    const out = join(dir, 'c64');
    const summary = await runSweep(writeSpec(dir, SPEC()), {
      out,
      concurrency: 64,
      logLevel: 'silent',
      transport: (services) => new InProcessTransport({ ...services, backend: recording(services.backend, seen) }),
    });
    expect(summary.status).toBe('complete');
    return { out, seen };
  })();
  return recorded;
}

describe('coordination protocols', () => {
  it('every protocol runs on ring, meanfield, chain (relay) and star (hub): verify accepts the corpus, and concurrency 1 and 64 write the same rows', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'beliefs.jsonl'), BELIEFS);
    const spec = writeSpec(dir, SPEC());
    const a = await runSweep(spec, { out: join(dir, 'c1'), concurrency: 1, partRows: 23, logLevel: 'silent' });
    expect(a.status).toBe('complete');
    expect(await rows((await recordedSweep()).out)).toEqual(await rows(join(dir, 'c1')));
    const verify = await verifyCorpus(join(dir, 'c1'));
    expect(verify.problems).toEqual([]);
    expect(verify.ok).toBe(true);
    // verify knows where protocol calls belong: an ssvp shard stripped of its merges is caught.
    const ssvp = join(dir, 'c1', 'events', 'fq367-ring-n16-T0.4-ssvp-t0.parquet');
    await queryRows(`COPY (SELECT * FROM read_parquet('${ssvp}') WHERE role <> 'merge') TO '${ssvp}.tmp' (FORMAT parquet)`);
    renameSync(`${ssvp}.tmp`, ssvp);
    const stripped = await verifyCorpus(join(dir, 'c1'));
    expect(stripped.ok).toBe(false);
    expect(stripped.problems.join('\n')).toMatch(/fq367-ring-n16-T0\.4-ssvp-t0: \d+ answers have a pair above tau 0\.2 but no merge/);
    const roles = await queryRows(
      `SELECT protocol, role, count(*)::INTEGER AS n FROM read_parquet('${dir}/c1/events/*.parquet') GROUP BY ALL ORDER BY ALL`,
    );
    const count = (protocol: string, role: string) => Number(roles.find((r) => r.protocol === protocol && r.role === role)?.n ?? 0);
    for (const p of ['isolated', 'glauber', 'ssvp', 'belief-board', 'drift-policy']) expect(count(p, 'agent')).toBe(8 * 16 * 5);
    expect(count('ssvp', 'merge')).toBeGreaterThan(0);
    // A drift judge after each of sweeps 1..3 of each of the 8 drift-policy runs.
    expect(count('drift-policy', 'judge')).toBe(8 * 3);
    expect(count('glauber', 'merge') + count('glauber', 'judge') + count('isolated', 'merge')).toBe(0);
    // Extra calls are counted with the run's calls, and agent rows alone carry tags and embeddings.
    const [nulls] = await queryRows(
      `SELECT count(*) FILTER (WHERE role <> 'agent' AND (tag IS NOT NULL OR emb_hashing IS NOT NULL))::INTEGER AS bad FROM read_parquet('${dir}/c1/events/*.parquet')`,
    );
    expect(nulls!.bad).toBe(0);
    const [runs] = await queryRows(
      `SELECT sum(calls)::INTEGER AS calls, sum(extra_calls)::INTEGER AS extra FROM read_parquet('${dir}/c1/runs.parquet')`,
    );
    expect(runs!.calls).toBe(5 * 8 * 16 * 5 + runs!.extra);
  });

  it("each protocol's prompts hold what its definition says, and nothing more", async () => {
    const { out, seen } = await recordedSweep();
    const all = await rows(out);
    const encoder = new HashingEncoder('hashing', 384);
    const byRun = new Map<string, Row[]>();
    for (const r of all) byRun.set(r.run_id, [...(byRun.get(r.run_id) ?? []), r]);
    let checked = 0;
    for (const [runId, runRows] of byRun) {
      const answer = new Map<number, Row>();
      for (const r of runRows) if (r.role === 'agent') answer.set(r.event, r);
      const protocol = String(runRows[0].protocol);
      const assigned = assignPopulation(
        {
          entries: [
            { id: 'wrong-97', belief: '97' },
            { id: 'wrong-95', belief: '95' },
          ],
          assign: 'fraction',
          fraction: 0.25,
        },
        16,
        Number((await queryRows(`SELECT seed FROM read_parquet('${out}/runs.parquet') WHERE run_id = '${runId}'`))[0].seed),
      );
      // Live board entries of each agent after each of its events (belief-board).
      const live = new Map<number, BoardEntry[]>();
      const boardAt = new Map<number, BoardEntry[]>();
      const moderatorOf = new Map<number, string>();
      for (const r of runRows) {
        const call = seen.get(Number(r.seed));
        expect(call, `${runId} ${r.role} ${r.event}`).toBeDefined();
        const { system, user } = call!.messages;
        if (r.role === 'agent') {
          // Personas: a hidden belief joins the system message of exactly the agents it was dealt to.
          const entry = assigned[r.agent];
          expect(r.persona).toBe(entry < 0 ? null : ['wrong-97', 'wrong-95'][entry]);
          expect(system.includes('Privately, you believe the answer is:')).toBe(entry >= 0);
          if (entry >= 0) expect(system).toContain(`Privately, you believe the answer is: ${entry === 0 ? '97' : '95'}`);
          expect(user.startsWith('Moderator: ')).toBe(moderatorOf.has(r.sweep));
          if (moderatorOf.has(r.sweep)) expect(user.startsWith(`Moderator: ${moderatorOf.get(r.sweep)}\n`)).toBe(true);
          expect(system.includes(BOARD_INSTRUCTION)).toBe(protocol === 'belief-board');
        }
        if (r.role === 'moderator') moderatorOf.set(r.sweep + 1, r.response);
        if (r.role === 'judge') {
          expect(system).toBe(PROTOCOL_SYSTEM);
          expect(user).toMatch(/Majority answer after round \d+: .*\nMajority answer after round \d+: /);
        }
        if (r.role === 'agent' && protocol === 'belief-board') {
          const entries = foldLive(live.get(r.agent) ?? [], r.board ? (JSON.parse(String(r.board)) as BoardEntry[]) : []);
          live.set(r.agent, entries);
          boardAt.set(r.event, entries);
        }
        if (r.role !== 'agent' || r.sweep === 0) continue;
        const reads = (r.read_versions as number[]).map(Number);
        const neighbours = (r.neighbours as number[]).map(Number);
        const previous = answer.get(reads[0])!.response;
        expect(user).toContain(`Your previous answer: ${previous}\n`);
        const lines = user.split('\n').filter((l) => l.startsWith('- Agent '));
        if (protocol === 'isolated') {
          expect(neighbours).toEqual([]);
          expect(lines).toEqual([]);
          expect(user).toContain('(none)');
        } else if (protocol === 'glauber' || protocol === 'drift-policy') {
          expect(lines).toEqual(neighbours.map((b, i) => `- Agent ${b}: ${answer.get(reads[i + 1])!.response}`));
        } else if (protocol === 'belief-board') {
          // Neighbours are read through their live board entries, never their raw answers.
          expect(lines).toEqual(neighbours.map((b, i) => `- Agent ${b}: ${renderEntries(boardAt.get(reads[i + 1])!)}`));
        } else if (protocol === 'ssvp') {
          // SSVP as published: a ContextSummary per event; the gate is the largest CDS between the agent's new
          // summary and the summaries its neighbours' versions carry; a ContextMerge per pair above tau.
          const summaryOf = (e: number) => runRows.find((m) => m.role === 'summary' && m.event === e)!;
          expect(seen.get(Number(summaryOf(r.event).seed))!.messages.user.endsWith(`\n${SUMMARY_INSTRUCTION}`)).toBe(true);
          const [mine, ...theirs] = await encoder.encode([
            summaryOf(r.event).response,
            ...reads.slice(1).map((v) => summaryOf(v).response),
          ]);
          // A chain's head reads nobody: nothing to diverge from, no gate.
          if (theirs.length === 0) expect(r.divergence).toBeNull();
          else expect(Number(r.divergence)).toBeCloseTo(Math.max(...theirs.map((t) => divergence(mine!, [t]))), 12);
          const merges = runRows.filter((m) => m.role === 'merge' && m.event === r.event);
          expect(merges.length > 0).toBe(Number(r.divergence) > 0.2);
          for (const m of merges) {
            expect(Number(m.divergence)).toBeGreaterThan(0.2);
            const mergeCall = seen.get(Number(m.seed))!.messages;
            expect(mergeCall.user.endsWith(`\n${CONTEXT_MERGE_INSTRUCTION}`)).toBe(true);
            // The agent's full timestamped context is prepended: its own answer and each one it reads.
            expect(mergeCall.user).toContain(`] you: ${previous}\n`);
          }
          // Below tau a neighbour is read as under glauber; above, through the review of its merge.
          expect(lines).toHaveLength(neighbours.length);
          expect(lines.filter((l) => l.includes(MERGE_NOTE))).toHaveLength(merges.length);
          neighbours.forEach((b, i) => {
            if (!lines[i]!.includes(MERGE_NOTE)) expect(lines[i]).toBe(`- Agent ${b}: ${answer.get(reads[i + 1])!.response}`);
          });
        }
        checked++;
      }
    }
    expect(checked).toBe(5 * 8 * 16 * 4);
  });

  it('the served surrogate, through the real openai client, answers every protocol call as the in-process one does', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'beliefs.jsonl'), BELIEFS);
    const prompts = parseDataset(readFileSync(RHEON6, 'utf8'), RHEON6);
    const server = await startSurrogateServer({ prompts, surrogate: { scenario: 'neutral' } });
    try {
      const served = writeSpec(
        dir,
        SPEC(`backend: {kind: openai, base_url: "${server.url}/v1", model: surrogate-potts-v1, max_in_flight: 32}\n`),
        'served.yaml',
      );
      expect((await runSweep(served, { out: join(dir, 'served'), logLevel: 'silent' })).status).toBe('complete');
      const cols =
        'run_id, event, role, seed, response, board, divergence, persona, prompt_tokens, completion_tokens, sampling_temperature, tag';
      const read = (out: string) => queryRows(`SELECT ${cols} FROM read_parquet('${out}/events/*.parquet') ORDER BY run_id, event, role`);
      const [a, b] = [await read(join(dir, 'served')), await read((await recordedSweep()).out)];
      expect(a.filter((r) => r.role !== 'agent').length).toBeGreaterThan(0);
      expect(a).toEqual(b);
    } finally {
      await server.close();
    }
  });

  it('annealing: every event of sweep t samples at the schedule temperature of t, which the model is sent', async () => {
    const dir = tempDir();
    const spec = writeSpec(
      dir,
      `name: annealing
dataset: ${RHEON6}
prompts: [fq117]
geometries: [ring]
sizes: [16]
temperatures: [1.3]
sweeps: 4
seed: 8
annealing: {to: 0.1}
`,
    );
    const seen = new Map<number, { messages: ChatMessages; context: PromptContext; temperature: number }>();
    const out = join(dir, 'o');
    await runSweep(spec, {
      out,
      logLevel: 'silent',
      transport: (services) => new InProcessTransport({ ...services, backend: recording(services.backend, seen) }),
    });
    const rows = await queryRows(`SELECT sweep, seed, temperature, sampling_temperature FROM read_parquet('${out}/events/*.parquet')`);
    const schedule = [1.3, 1.3, 0.9, 0.5, 0.1];
    for (const r of rows) {
      expect(Number(r.temperature)).toBe(1.3);
      expect(Number(r.sampling_temperature)).toBeCloseTo(schedule[Number(r.sweep)], 12);
      expect(seen.get(Number(r.seed))!.temperature).toBe(Number(r.sampling_temperature));
    }
    expect(rows.length).toBe(16 * 5);
  });
});
