import { describe, expect, it } from 'vitest';
import {
  DataflowPlanner,
  decodeSpentVersion,
  encodeSpentVersion,
  InputError,
  isDrift,
  keptReads,
  parseSweepSpec,
  parseVote,
  planSweep,
  poolShare,
  poolsBudget,
  renderTeamCall,
  runEvents,
  subtaskOf,
  tallyVotes,
  checkContextBudget,
  DEFAULT_TEMPLATE,
  teamCalls,
  teamEventCount,
  TeamSchedule,
  teamCallCosts,
  type RunPlan,
  type Prompt,
  type TeamRun,
} from '../src/index.js';

const PROMPT: Prompt = { id: 'p1', question: 'Q?', accepted: ['a'], false_answers: ['b'], false_premise: false };

function team(
  dynamics: TeamRun['dynamics'],
  n: number,
  extra: Partial<TeamRun> & { memory?: 'all' | 'recent'; personas?: 'population' | 'generated' } = {},
): TeamRun & { seed: number } {
  const { memory = 'all', personas = 'generated', ...rest } = extra;
  return { n, sweeps: 1, dynamics, protocol: 'glauber', controls: { tau: 0.25, team: { memory, personas } }, seed: 5, ...rest };
}

const readsOf = (run: TeamRun) => teamCalls(run).map((c) => c.reads.map((r) => r.event));

describe('team schedules (docs/teams.md)', () => {
  it('relay: agent i reads only agent i-1; the chain is N calls', () => {
    const calls = teamCalls(team('relay', 4));
    expect(calls.map((c) => [c.role, c.sweep, c.agent])).toEqual([
      ['relay', 0, 0],
      ['relay', 1, 1],
      ['relay', 2, 2],
      ['relay', 3, 3],
    ]);
    expect(readsOf(team('relay', 4))).toEqual([[], [0], [1], [2]]);
  });

  it('hub: one decomposition, N workers reading it only, one aggregation reading every report', () => {
    const calls = teamCalls(team('hub', 3));
    expect(calls.map((c) => [c.role, c.sweep, c.agent])).toEqual([
      ['orchestrator', 0, 3],
      ['worker', 1, 0],
      ['worker', 1, 1],
      ['worker', 1, 2],
      ['aggregator', 2, 3],
    ]);
    expect(readsOf(team('hub', 3))).toEqual([[], [0], [0], [0], [0, 1, 2, 3]]);
  });

  it('debate (P = 2, R = 2, generated personas, memory all): contributions in turn, votes, a counted solution, a judge', () => {
    const run = team('debate', 2, { sweeps: 2 });
    const calls = teamCalls(run);
    // 0 persona-gen | turn 1: 1, 2 contributions; 3, 4 votes; 5 solution | turn 2: 6, 7; 8, 9; 10 | 11 judge
    expect(calls.map((c) => c.role)).toEqual([
      'persona-gen',
      'persona',
      'persona',
      'vote',
      'vote',
      'solution',
      'persona',
      'persona',
      'vote',
      'vote',
      'solution',
      'drift-judge',
    ]);
    expect(readsOf(run)).toEqual([
      [],
      [0],
      [0, 1],
      [0, 1, 2],
      [0, 1, 2],
      [3, 4, 1, 2],
      // persona 0 of turn 2: personas, turn 1's contributions, the draft (turn 1's solution)
      [0, 1, 2, 5],
      [0, 1, 2, 5, 6],
      [0, 6, 7],
      [0, 6, 7],
      [8, 9, 6, 7],
      [5, 10],
    ]);
    expect(calls[5].agent).toBe(2);
    expect(calls[11].agent).toBe(2);
    expect(teamEventCount(run)).toBe(12);
  });

  it('memory recent: turn 3 reads turn 2 only, not turn 1', () => {
    const all = teamCalls(team('debate', 2, { sweeps: 3, memory: 'all', personas: 'population' }));
    const recent = teamCalls(team('debate', 2, { sweeps: 3, memory: 'recent', personas: 'population' }));
    // Without persona generation: turn 1 is events 0..4, turn 2 5..9, judge 10, turn 3 from 11.
    expect(all[11].reads.map((r) => r.event)).toEqual([0, 1, 5, 6, 9]);
    expect(recent[11].reads.map((r) => r.event)).toEqual([5, 6, 9]);
  });

  it('drift-policy: a feedback call after turns 2..R-1, made on drift and read by the next turn', () => {
    const run = team('debate', 2, { sweeps: 3, protocol: 'drift-policy', personas: 'population' });
    const calls = teamCalls(run);
    const feedback = calls.filter((c) => c.role === 'feedback');
    expect(feedback.map((c) => [c.event, c.sweep, c.agent, c.onDriftOf])).toEqual([[11, 2, 3, 10]]);
    expect(feedback[0].reads.map((r) => r.event)).toEqual([10, 5, 6, 9]);
    // Turn 3's first contribution reads the feedback after the draft.
    expect(calls[12].reads.map((r) => r.event)).toEqual([0, 1, 5, 6, 9, 11]);
    expect(calls.length).toBe(teamEventCount(run));
  });

  it('regenerate: the flagged turn again with its own events, and later calls read both versions and the verdict', () => {
    const run = team('debate', 2, { sweeps: 3, protocol: 'regenerate', personas: 'population' });
    const calls = teamCalls(run);
    // Turn 1: 0..4; turn 2: 5..9; judge 10; regenerated turn 2: 11..15; turn 3 from 16.
    expect(calls.slice(11, 16).map((c) => [c.role, c.sweep, c.onDriftOf])).toEqual([
      ['persona', 2, 10],
      ['persona', 2, 10],
      ['vote', 2, 10],
      ['vote', 2, 10],
      ['solution', 2, 10],
    ]);
    // The regenerated contribution reads the same history as the original one (not the discarded turn), and the verdict.
    expect(calls[11].reads.map((r) => r.event)).toEqual([10, 0, 1, 4]);
    expect(calls[5].reads.map((r) => r.event)).toEqual([0, 1, 4]);
    const t3 = calls[16];
    expect(t3.reads.map((r) => [r.event, r.kind, r.variant ?? '-'])).toEqual([
      [0, 'contribution', '-'],
      [1, 'contribution', '-'],
      [10, 'verdict', '-'],
      [5, 'contribution', 'original'],
      [6, 'contribution', 'original'],
      [11, 'contribution', 'regenerated'],
      [12, 'contribution', 'regenerated'],
      [9, 'draft', 'original'],
      [15, 'draft', 'regenerated'],
    ]);
    const texts = t3.reads.map((r) => `e${r.event}`);
    expect(keptReads(t3.reads, texts, () => true).map((k) => k.text)).toEqual(['e0', 'e1', 'e10', 'e11', 'e12', 'e15']);
    expect(keptReads(t3.reads, texts, () => false).map((k) => k.text)).toEqual(['e0', 'e1', 'e10', 'e5', 'e6', 'e9']);
    // The judge of turn 3 compares the kept solution of turn 2 with turn 3's.
    const judge = calls.find((c) => c.role === 'drift-judge' && c.sweep === 3)!;
    expect(judge.reads.map((r) => r.event)).toEqual([10, 9, 15, 20]);
    expect(calls.length).toBe(teamEventCount(run));
  });

  it('event counts match the schedules for every arm, size and turn count', () => {
    for (const protocol of ['glauber', 'drift-policy', 'regenerate'] as const)
      for (const personas of ['population', 'generated'] as const)
        for (const n of [1, 2, 3, 5])
          for (const sweeps of [1, 2, 3, 7]) {
            const run = team('debate', n, { sweeps, protocol, personas });
            expect(teamCalls(run).length).toBe(teamEventCount(run));
            expect(runEvents(run)).toBe(teamEventCount(run));
          }
    expect(runEvents(team('relay', 7))).toBe(7);
    expect(runEvents(team('hub', 7))).toBe(9);
  });

  it('every read is of an earlier event, so the event order is a topological order', () => {
    const run = team('debate', 3, { sweeps: 7, protocol: 'regenerate' });
    for (const c of teamCalls(run)) for (const r of c.reads) expect(r.event).toBeLessThan(c.event);
  });

  it('the dataflow planner runs a team schedule in any completion order and resumes with every earlier version live', () => {
    const run = team('debate', 3, { sweeps: 4, protocol: 'drift-policy' });
    const planner = new DataflowPlanner(new TeamSchedule(run), 4096);
    const done = new Set<number>();
    const calls = teamCalls(run);
    while (!planner.done) {
      const ready = planner.take(64);
      expect(ready.length).toBeGreaterThan(0);
      for (const e of ready.reverse()) {
        for (const v of e.readVersions) expect(done.has(v)).toBe(true);
        expect(Array.from(e.neighbours)).toEqual(calls[e.event].reads.map((r) => r.agent));
        done.add(e.event);
        // Nothing is superseded in a team; the last completion releases every version.
        expect(planner.complete(e.event)).toEqual(done.size === teamEventCount(run) ? calls.map((c) => c.event) : []);
      }
    }
    expect(done.size).toBe(teamEventCount(run));
    const resumed = new DataflowPlanner(new TeamSchedule(run), 4096, 7);
    expect(Array.from(resumed.liveVersions()).filter((v) => v >= 0)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(resumed.take(1)[0]!.event).toBe(7);
  });
});

describe('votes, verdicts and subtasks', () => {
  it('parseVote takes the first number of 1..P, else null', () => {
    expect(parseVote('2', 3)).toBe(1);
    expect(parseVote('I vote for solution 3.', 3)).toBe(2);
    expect(parseVote('0 or 7, then 1', 3)).toBe(0);
    expect(parseVote('none', 3)).toBeNull();
  });

  it('tallyVotes: plurality; a null vote counts for nobody; ties broken by the seed among the tied only', () => {
    expect(tallyVotes([1, 1, 0], 3, 9)).toBe(1);
    expect(tallyVotes([2, null, null], 3, 9)).toBe(2);
    const tied = new Set<number>();
    for (let seed = 0; seed < 200; seed++) {
      const w = tallyVotes([0, 2, null], 3, seed);
      expect([0, 2]).toContain(w);
      expect(tallyVotes([0, 2, null], 3, seed)).toBe(w);
      tied.add(w);
    }
    expect([...tied].sort()).toEqual([0, 2]);
    const none = new Set<number>();
    for (let seed = 0; seed < 200; seed++) none.add(tallyVotes([null, null, null], 3, seed));
    expect([...none].sort()).toEqual([0, 1, 2]);
  });

  it('isDrift reads DRIFT: as drift and NO DRIFT as none', () => {
    expect(isDrift('DRIFT: lack of progress.')).toBe(true);
    expect(isDrift('NO DRIFT: the solution kept to the task.')).toBe(false);
  });

  it('a worker sees its own numbered subtask only', () => {
    const plan = '1. Find the capital.\n2) Find the river.\n';
    expect(subtaskOf(plan, 1, 2)).toBe('Find the river.');
    expect(subtaskOf(plan, 2, 3)).toBe('part 3 of 3 of the task');
    const call = teamCalls(team('hub', 2))[2];
    const m = renderTeamCall({ call, size: 2, rounds: 1, question: 'Q?', reads: [{ read: call.reads[0], text: plan }] });
    expect(m.user).toContain('Your subtask: Find the river.');
    expect(m.user).not.toContain('capital');
  });
});

describe('team specs', () => {
  const spec = (extra: string) =>
    parseSweepSpec(`name: t\ndataset: d.jsonl\ngeometries: [chain]\nsizes: [1, 3]\ntemperatures: [0.7]\nseed: 1\n${extra}`, 'team.yaml');

  it('config ids name the team schedule; any N is taken; k is 0; the team settings ride on the run', () => {
    const runs = planSweep(spec('dynamics: relay\nteam: {token_budget: 300}'), [PROMPT], 'team.yaml');
    expect(runs.map((r) => r.runId)).toEqual(['p1-chain-n1-T0.7-glauber-relay-t0', 'p1-chain-n3-T0.7-glauber-relay-t0']);
    expect(runs.map((r) => r.k)).toEqual([0, 0]);
    expect(runs[1].controls.team).toEqual({ memory: 'all', personas: 'generated', tokenBudget: 300 });
  });

  it('a pooled relay (team.budget_rule pool): member k reads every earlier call, and its share is what they left over the members still to write', () => {
    const [, pooled] = planSweep(spec('dynamics: relay\nteam: {token_budget: 100, budget_rule: pool}'), [PROMPT], 'team.yaml');
    expect(pooled.controls.team).toEqual({ memory: 'all', personas: 'generated', tokenBudget: 100, budgetRule: 'pool' });
    expect(poolsBudget(pooled)).toBe(true);
    expect(teamCalls(pooled).map((c) => c.reads.map((r) => `${r.event}:${r.kind}`))).toEqual([[], ['0:note'], ['0:spent', '1:note']]);
    const [, split] = planSweep(spec('dynamics: relay\nteam: {token_budget: 100, budget_rule: split}'), [PROMPT], 'team.yaml');
    expect(poolsBudget(split)).toBe(false);
    expect(teamCalls(split).map((c) => c.reads.map((r) => r.event))).toEqual([[], [0], [1]]);
    // 100 over 3: 33 first; a member that wrote 5 leaves 95 for two (47), and the last has all that is left.
    expect([poolShare(100, 3, 0, 0), poolShare(100, 3, 1, 5), poolShare(100, 3, 2, 5 + 47)]).toEqual([33, 47, 48]);
    // Members that write all they may: the chain writes exactly the budget at every N; never more.
    for (const n of [1, 2, 3, 7, 8]) {
      let spent = 0;
      for (let k = 0; k < n; k++) spent += poolShare(100, n, k, spent);
      expect(spent).toBe(100);
    }
    expect(decodeSpentVersion(encodeSpentVersion('a\nb', 12))).toEqual({ text: 'a\nb', completionTokens: 12 });
    expect(() => decodeSpentVersion('no tokens')).toThrow(/without its spent tokens/);
  });

  it('a population sweep keeps its ids and carries no team settings', () => {
    const runs = planSweep(
      parseSweepSpec('name: t\ndataset: d.jsonl\ngeometries: [ring]\nsizes: [4]\ntemperatures: [0.7]\nseed: 1\n', 'p.yaml'),
      [PROMPT],
      'p.yaml',
    );
    expect(runs[0].runId).toBe('p1-ring-n4-T0.7-glauber-t0');
    expect(runs[0].controls.team).toBeUndefined();
  });

  it('refuses protocols a team schedule does not run, regenerate on populations, and early stopping, naming the field', () => {
    const refuse = (text: string, field: string) => {
      let error: unknown;
      try {
        planSweep(text.startsWith('name:') ? parseSweepSpec(text, 'team.yaml') : spec(text), [PROMPT], 'team.yaml');
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(InputError);
      expect((error as Error).message).toContain(`team.yaml: ${field}:`);
    };
    refuse('dynamics: relay\nprotocol: drift-policy', 'protocol');
    refuse('dynamics: hub\nprotocol: ssvp', 'protocol');
    refuse('name: t\ndataset: d.jsonl\ngeometries: [ring]\nsizes: [4]\ntemperatures: [0.7]\nprotocol: regenerate\n', 'protocol');
    refuse('dynamics: debate\nearly_stopping: {}', 'early_stopping');
    refuse('dynamics: relay\nteam: {token_budget: 2}', 'team.token_budget');
    refuse('dynamics: relay\nteam: {budget_rule: pool}', 'team.budget_rule');
    refuse('name: t\ndataset: d.jsonl\ngeometries: [ring]\nsizes: [4]\ntemperatures: [0.7]\nteam: {memory: recent}\n', 'team');
  });

  it('refuses at parse time a team key no schedule of the sweep reads, naming it; a key one of them reads is kept', () => {
    const text = (rest: string) => `name: t\ndataset: d.jsonl\ngeometries: [chain]\nsizes: [4]\ntemperatures: [0.7]\n${rest}\n`;
    const message = (rest: string) => {
      try {
        parseSweepSpec(text(rest), 'team.yaml');
      } catch (e) {
        expect(e).toBeInstanceOf(InputError);
        return (e as Error).message;
      }
      return 'accepted';
    };
    expect(message('dynamics: relay\nteam: {memory: all}')).toBe(
      "team.yaml: team.memory: only debate runs read it (the earlier turns in each contribution's prompt), and this sweep's dynamics are relay; fix: remove team.memory, or add dynamics: debate",
    );
    expect(message('dynamics: hub\nteam: {memory: recent}')).toMatch(/^team\.yaml: team\.memory: only debate runs read it/);
    expect(message('dynamics: debate\nteam: {token_budget: 480}')).toBe(
      "team.yaml: team.token_budget: only relay runs share a token budget over the chain, and this sweep's dynamics are debate; fix: remove team.token_budget, or add dynamics: relay",
    );
    expect(message('dynamics: debate\nteam: {board_tokens: 64}')).toMatch(
      /^team\.yaml: team\.board_tokens: only the board arm of relay and hub/,
    );
    expect(message('dynamics: [relay, debate]\nteam: {memory: recent, token_budget: 480}')).toBe('accepted');
    expect(message('dynamics: relay\nteam: {token_budget: 480}')).toBe('accepted');
  });
});

describe('panta plan for teams', () => {
  it('counts each role once per call, a relay spends its constant budget whatever N, and conditional calls are at most', () => {
    for (const n of [1, 4, 8]) {
      const [run] = planSweep(
        parseSweepSpec(
          `name: t\ndataset: d.jsonl\ngeometries: [chain]\nsizes: [${n}]\ntemperatures: [0.7]\ndynamics: relay\nteam: {token_budget: 400}\n`,
          't.yaml',
        ),
        [PROMPT],
        't.yaml',
      );
      const [relay] = teamCallCosts(run!, 100);
      expect(relay).toMatchObject({ role: 'relay', calls: n, atMost: false, completionTokens: 400 });
    }
    const debate = { ...team('debate', 2, { sweeps: 3, protocol: 'drift-policy' }), prompt: PROMPT } as unknown as RunPlan;
    const costs = Object.fromEntries(teamCallCosts(debate, 50).map((c) => [c.role, [c.calls, c.atMost, c.completionTokens]]));
    expect(costs).toEqual({
      'persona-gen': [1, false, 50],
      persona: [6, false, 300],
      vote: [6, false, 300],
      'drift-judge': [2, false, 100],
      feedback: [1, true, 50],
    });
  });
});

describe('team prompts against the model context', () => {
  it('a debate whose history cannot fit max_context_tokens is refused before it runs; memory recent fits', () => {
    const text = (memory: string) =>
      `name: t\ndataset: d.jsonl\ngeometries: [meanfield]\nsizes: [3]\ntemperatures: [1.0]\nsweeps: 7\nmax_tokens: 1024\ndynamics: debate\nteam: {memory: ${memory}}\nbackend: {kind: openai, base_url: "http://localhost:1/v1", model: m, max_context_tokens: 12000}\n`;
    const plan = (memory: string) => {
      const spec = parseSweepSpec(text(memory), 'd.yaml');
      return () => checkContextBudget(spec, planSweep(spec, [PROMPT], 'd.yaml'), DEFAULT_TEMPLATE, 'd.yaml');
    };
    // Turn 7 with memory all quotes 6 turns x 3 contributions + 6 earlier ones + the draft: ~25 x 1,024 tokens.
    expect(plan('all')).toThrow(/d\.yaml: sizes: a debate persona call of p1-meanfield-n3-T1-glauber-debate may need [\d,]+ prompt tokens/);
    // With recent memory: the previous turn (3), the current one (up to 2) and the draft, about 6 x 1,024.
    expect(plan('recent')).not.toThrow();
  });

  it("a population's persona counts in a team call's prompt: plan shows it, and one too long for the context is refused before the run", () => {
    const spec = parseSweepSpec(
      'name: t\ndataset: d.jsonl\ngeometries: [chain]\nsizes: [3]\ntemperatures: [0.7]\ndynamics: relay\npopulation: {file: people.jsonl, assign: same}\nbackend: {kind: openai, base_url: "http://localhost:1/v1", model: m, max_context_tokens: 4096}\n',
      'r.yaml',
    );
    const runsWith = (persona: string) => planSweep(spec, [PROMPT], 'r.yaml', new Map(), { populations: [[{ id: 'p', persona }]] });
    const small = teamCallCosts(runsWith('A careful historian.')[0]!, spec.max_tokens)[0]!;
    const big = runsWith('x'.repeat(400_000));
    const [relay] = teamCallCosts(big[0]!, spec.max_tokens);
    // 400,000 characters at 4 a token: 100,000 more prompt tokens in each of the 3 members' calls.
    expect(relay!.largestPromptTokens - small.largestPromptTokens).toBeGreaterThanOrEqual(100_000 - 6);
    expect(relay!.promptTokens - small.promptTokens).toBeGreaterThanOrEqual(3 * (100_000 - 6));
    expect(() => checkContextBudget(spec, big, DEFAULT_TEMPLATE, 'r.yaml')).toThrow(
      /^r\.yaml: sizes: a relay relay call of .* may need 100,\d{3} prompt tokens .*over max_context_tokens 4,096 less the reply/,
    );
    expect(() => checkContextBudget(spec, runsWith('A careful historian.'), DEFAULT_TEMPLATE, 'r.yaml')).not.toThrow();
  });
});
