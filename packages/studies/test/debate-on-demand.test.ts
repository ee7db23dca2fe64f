import { describe, expect, it } from 'vitest';
import {
  callsDebate,
  DEBATE_ASK,
  DEBATE_OFFER,
  debateMotion,
  renderTeamCall,
  TEAM_SYSTEM,
  teamCallCosts,
  teamCalls,
  teamEventCount,
  type RunPlan,
  type TeamCallPlan,
  type TeamRun,
} from '@panta/core';
import { readTeamCall } from '../../llm/src/surrogate/team-read.js';
import { teamFacts } from '../src/teams/surrogate/team-facts/index.js';

const run = (dynamics: 'relay' | 'hub', n: number, protocol: string): TeamRun =>
  ({ n, sweeps: 1, dynamics, protocol, population: undefined, controls: {} }) as unknown as TeamRun;

const shape = (calls: TeamCallPlan[]) =>
  calls.map((c) => [c.event, c.role, c.agent, c.reads.map((r) => `${r.event}:${r.kind}`).join(' '), c.onDemandOf ?? '']);

const PROMPT = {
  id: 'mf01',
  question: 'Name the capitals of China and France.',
  accepted: ['Beijing; Paris'],
  false_answers: [],
  facts: ['Beijing', 'Paris'],
};

describe('down: debate on demand (paper 001, relay and hub arms)', () => {
  it("plans a debate after each hand-off, made only on demand: every other member argues in turn; the caller's reader reads the arguments", () => {
    expect(shape(teamCalls(run('relay', 3, 'down')))).toEqual([
      [0, 'relay', 0, '', ''],
      [1, 'debater', 1, '0:motion', 0],
      [2, 'debater', 2, '0:motion 1:argument', 0],
      [3, 'relay', 1, '0:note 1:argument 2:argument', ''],
      [4, 'debater', 0, '3:motion', 3],
      [5, 'debater', 2, '3:motion 4:argument', 3],
      [6, 'relay', 2, '3:note 4:argument 5:argument', ''],
    ]);
    // Hub: each worker may call one among the other workers; the aggregator reads every argument.
    expect(shape(teamCalls(run('hub', 2, 'down')))).toEqual([
      [0, 'orchestrator', 2, '', ''],
      [1, 'worker', 0, '0:decomposition', ''],
      [2, 'worker', 1, '0:decomposition', ''],
      [3, 'debater', 1, '1:motion', 1],
      [4, 'debater', 0, '2:motion', 2],
      [5, 'aggregator', 2, '0:decomposition 1:report 2:report 3:argument 4:argument', ''],
    ]);
    for (const [d, n] of [
      ['relay', 1],
      ['relay', 4],
      ['hub', 1],
      ['hub', 3],
    ] as const)
      expect(teamEventCount(run(d, n, 'down'))).toBe(teamCalls(run(d, n, 'down')).length);
    expect(teamEventCount(run('relay', 3, 'down'))).toBe(3 + 2 * 2);
    expect(teamEventCount(run('hub', 3, 'down'))).toBe(5 + 3 * 2);
  });

  it('a motion is the first DEBATE line with a question; off-format, empty and huge replies call none', () => {
    expect(debateMotion('Found: Beijing. Open: 1 of 2 parts.\ndebate:  what is  part 2 ?\nDEBATE: another')).toEqual({
      question: 'what is part 2 ?',
      rest: 'Found: Beijing. Open: 1 of 2 parts.',
    });
    expect(debateMotion('DEBATE:\nDEBATE:   \nThe answer is 96.')).toEqual({ question: null, rest: 'The answer is 96.' });
    expect(callsDebate('')).toBe(false);
    expect(callsDebate('We should debate: whether part 2 is Paris.')).toBe(false);
    expect(callsDebate('x'.repeat(100_000))).toBe(false);
    expect(callsDebate(`${'y'.repeat(100_000)}\nDEBATE: is it Paris?`)).toBe(true);
  });

  it("prompts: callers are offered the debate; a debater sees the motion, the caller's note and the earlier arguments; the reader sees the debate", () => {
    const calls = teamCalls(run('relay', 3, 'down'));
    const render = (call: TeamCallPlan, text: (kind: string, agent: number) => string, dynamics = 'relay', size = 3) =>
      renderTeamCall({
        call,
        size,
        rounds: 1,
        question: PROMPT.question,
        reads: call.reads.map((read) => ({ read, text: text(read.kind, read.agent) })),
        arm: 'down',
        dynamics,
      });
    expect(render(calls[0]!, () => '').user).toContain(DEBATE_OFFER('the next agent'));
    expect(render(calls[6]!, () => '').user).not.toContain(DEBATE_OFFER('the next agent'));
    const caller = 'Found: Beijing. Open: 1 of 2 parts.\nDEBATE: what is part 2 of the answer?';
    const second = render(calls[2]!, (kind) => (kind === 'motion' ? caller : 'part 2: Paris.'));
    expect(second.system).toBe(TEAM_SYSTEM.debater('agent 1', 'agent 3', 'a relay of 3 agents'));
    expect(second.user).toBe(
      `Task: ${PROMPT.question}\nDebate called by agent 1: what is part 2 of the answer?\nIts hand-off note: Found: Beijing. Open: 1 of 2 parts.\nArgument of agent 2: part 2: Paris.\n${DEBATE_ASK}`,
    );
    const reader = render(calls[3]!, (kind, agent) => (kind === 'note' ? caller : `part 2: ${agent === 1 ? 'Paris' : 'Lyon'}.`));
    expect(reader.user).toContain(
      'Hand-off note from agent 1: Found: Beijing. Open: 1 of 2 parts.\nDebate called by agent 1: what is part 2 of the answer?\nArgument of agent 2: part 2: Paris.\nArgument of agent 3: part 2: Lyon.\n',
    );
    // No debate called: the reader sees the note alone (the skipped calls' empty replies are not shown).
    expect(render(calls[3]!, (kind) => (kind === 'note' ? 'Found: Beijing; Paris.' : '')).user).not.toContain('Debate called');
    const hub = teamCalls(run('hub', 2, 'down'));
    const agg = render(
      hub[5]!,
      (kind, agent) => (kind === 'report' ? (agent === 1 ? 'Found: nothing.\nDEBATE: part 2?' : 'Found: x.') : 'part 2: Paris.'),
      'hub',
      2,
    );
    expect(agg.user).toContain(
      'Report of worker 2: Found: nothing.\nDebate called by worker 2: part 2?\nArgument of worker 1: part 2: Paris.\n',
    );
    expect(agg.user).not.toContain('Debate called by worker 1');
    expect(render(hub[1]!, () => '1. a\n2. b', 'hub', 2).user).toContain(DEBATE_OFFER('the orchestrator'));
  });

  it('panta plan counts the debaters as calls made at most (only on demand)', () => {
    const plan = { ...run('relay', 3, 'down'), prompt: PROMPT, temperature: 0.7 } as unknown as RunPlan;
    const debaters = teamCallCosts(plan, 64).find((c) => c.role === 'debater')!;
    expect(debaters).toMatchObject({ calls: 4, atMost: true, completionTokens: 4 * 64 });
    expect(teamCallCosts({ ...plan, protocol: 'glauber' } as RunPlan, 64).some((c) => c.role === 'debater')).toBe(false);
  });

  it('the surrogate calls a debate on a part it could not find, and a debater argues the part it finds', () => {
    const calls = teamCalls(run('relay', 3, 'down'));
    const ask = (call: TeamCallPlan, text: (kind: string) => string, seed = 1) => {
      const messages = renderTeamCall({
        call,
        size: 3,
        rounds: 1,
        question: PROMPT.question,
        reads: call.reads.map((read) => ({ read, text: text(read.kind) })),
        arm: 'down',
        dynamics: 'relay',
      });
      const view = readTeamCall(messages, [PROMPT])!;
      return { view, reply: teamFacts.team!(view, seed, 100, messages) };
    };
    const motion = 'Found: Beijing. Open: 1 of 2 parts.\nDEBATE: what is part 2 of the answer?';
    const { view, reply } = ask(calls[1]!, () => motion);
    expect(view).toMatchObject({ role: 'debater', member: 1, size: 3 });
    expect(reply).toMatch(/^part 2: (Paris|not known to me)\.$/);
    // Over seeds, debaters find the part most of the time.
    const found = Array.from({ length: 40 }, (_, s) => ask(calls[1]!, () => motion, s).reply).filter((r) => r === 'part 2: Paris.');
    expect(found.length).toBeGreaterThan(20);
    // A member with a part open calls a debate on it; with every part in hand, none.
    const members = Array.from({ length: 40 }, (_, s) => ask(calls[0]!, () => '', s).reply);
    for (const m of members) expect(callsDebate(m)).toBe(/Open: [12] of 2/.test(m));
    expect(members.some((m) => callsDebate(m))).toBe(true);
  });
});
