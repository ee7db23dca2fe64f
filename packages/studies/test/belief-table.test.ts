import { describe, expect, it } from 'vitest';
import {
  BOARD_TOOL,
  CHARS_PER_TOKEN,
  EXTRACTOR_ASK,
  OBSERVER_ASK,
  parseLedgerLines,
  renderBoard,
  renderTeamCall,
  TABLE_EMPTY,
  TABLE_HEADER,
  TEAM_SYSTEM,
  teamBoardEntries,
  teamCalls,
  teamEventCount,
  type TeamCallPlan,
  type TeamRun,
} from '@panta/core';
import { readTeamCall } from '../../llm/src/surrogate/team-read.js';
import { teamFacts } from '../src/teams/surrogate/team-facts/index.js';

const run = (dynamics: 'relay' | 'hub', n: number, protocol: string): TeamRun =>
  ({ n, sweeps: 1, dynamics, protocol, population: undefined, controls: {} }) as unknown as TeamRun;

const agent = (a: number) => `agent ${a + 1}`;
const shape = (calls: TeamCallPlan[]) => calls.map((c) => [c.event, c.role, c.agent, c.reads.map((r) => `${r.event}:${r.kind}`).join(' ')]);

const PROMPT = {
  id: 'mf01',
  question: 'Name the capitals of China and France.',
  accepted: ['Beijing; Paris'],
  false_answers: [],
  facts: ['Beijing', 'Paris'],
};

describe("the observer's belief table and the extract baseline (paper 001, relay and hub arms)", () => {
  it('schedules an observer (table) or extractor (extract) after each hand-off; members read every earlier one', () => {
    expect(shape(teamCalls(run('relay', 3, 'table')))).toEqual([
      [0, 'relay', 0, ''],
      [1, 'observer', 0, '0:trace'],
      [2, 'relay', 1, '1:table 0:note'],
      [3, 'observer', 1, '1:table 2:trace'],
      [4, 'relay', 2, '1:table 3:table 2:note'],
    ]);
    // The extractor reads the trace alone (no ledger to revise).
    expect(shape(teamCalls(run('relay', 3, 'extract'))).map((c) => c[3])).toEqual([
      '',
      '0:trace',
      '1:extract 0:note',
      '2:trace',
      '1:extract 3:extract 2:note',
    ]);
    // Hub: the orchestrator's observer before the workers, each worker's after them; the aggregator reads all.
    expect(shape(teamCalls(run('hub', 2, 'table')))).toEqual([
      [0, 'orchestrator', 2, ''],
      [1, 'observer', 2, '0:trace'],
      [2, 'worker', 0, '0:decomposition 1:table'],
      [3, 'worker', 1, '0:decomposition 1:table'],
      [4, 'observer', 0, '1:table 2:trace'],
      [5, 'observer', 1, '1:table 3:trace'],
      [6, 'aggregator', 2, '0:decomposition 2:report 3:report 1:table 4:table 5:table'],
    ]);
    for (const [d, n] of [
      ['relay', 1],
      ['relay', 4],
      ['hub', 1],
      ['hub', 3],
    ] as const)
      for (const p of ['glauber', 'table', 'extract']) expect(teamEventCount(run(d, n, p))).toBe(teamCalls(run(d, n, p)).length);
    // The plain team is unchanged.
    expect(shape(teamCalls(run('relay', 2, 'glauber')))).toEqual([
      [0, 'relay', 0, ''],
      [1, 'relay', 1, '0:note'],
    ]);
  });

  it('reads OBSERVATION and BELIEF lines as typed entries; any other such line is malformed, ignored and counted', () => {
    const parsed = parseLedgerLines(
      [
        'Agent 1 found two parts.',
        'OBSERVATION: part 1 | Beijing | 0.9',
        'belief: answer ready | no, one part open | .6',
        'OBSERVATION: part 2 | Paris',
        'BELIEF: part 3 | Rome | sure',
        'observation:  | empty object | 0.5',
      ].join('\n'),
    );
    expect(parsed.lines).toEqual([
      { object: 'part 1', claim: 'Beijing', confidence: 0.9, type: 'observation' },
      { object: 'answer ready', claim: 'no, one part open', confidence: 0.6, type: 'belief' },
    ]);
    expect(parsed.malformed).toBe(3);
    expect(parsed.rest).toBe('Agent 1 found two parts.');
  });

  it("the table: only observers write it, about the member they read; a later observer revises the object's entry, whoever it was about", () => {
    const calls = teamCalls(run('relay', 3, 'table'));
    const replies = new Map<number, string>([
      // A member's own OBSERVATION / BELIEF lines write nothing: the table is the observer's.
      [0, 'Found: Beijing.\nOBSERVATION: part 9 | x | 1\nBELIEF: part 9 | x | 1'],
      [1, 'OBSERVATION: part 1 | Beijing | 0.9\nBELIEF: answer ready | no | 0.7'],
      [2, 'Found: Shanghai; Paris.'],
      [3, 'OBSERVATION: part 1 | Shanghai | 0.8\nOBSERVATION: part 2 | Paris | 0.9'],
    ]);
    const written = teamBoardEntries(calls, replies, 'object', true);
    expect(written.get(0)).toEqual({ entries: [], malformed: 0 });
    expect(written.get(2)).toEqual({ entries: [], malformed: 0 });
    expect(written.get(1)!.entries.map((e) => [e.id, e.author, e.type, e.revises])).toEqual([
      ['e1.0', 0, 'observation', null],
      ['e1.1', 0, 'belief', null],
    ]);
    expect(written.get(3)!.entries.map((e) => [e.id, e.author, e.type, e.revises])).toEqual([
      ['e3.0', 1, 'observation', 'e1.0'],
      ['e3.1', 1, 'observation', null],
    ]);
    const all = [...written.get(1)!.entries, ...written.get(3)!.entries];
    expect(renderBoard(all, 256, agent, 'object', true).lines).toEqual([
      TABLE_HEADER,
      '- [e1.1] agent 1 on answer ready: no (belief, confidence 0.7)',
      '- [e3.0] agent 2 on part 1: Shanghai (observation, confidence 0.8) [revised; was "Beijing" by agent 1]',
      '- [e3.1] agent 2 on part 2: Paris (observation, confidence 0.9)',
    ]);
    expect(renderBoard([], 256, agent, 'object', true).lines).toEqual([TABLE_EMPTY]);
  });

  it('adversarial observer replies: off-format prose, empty and huge replies write nothing or stay under the cap', () => {
    const calls = teamCalls(run('relay', 3, 'table'));
    const entriesOf = (observer: string) => teamBoardEntries(calls, new Map([[1, observer]]), 'object', true).get(1)!;
    expect(entriesOf('The answer is 96.')).toEqual({ entries: [], malformed: 0 });
    expect(entriesOf('')).toEqual({ entries: [], malformed: 0 });
    expect(entriesOf('OBSERVATION: OBSERVATION: | | |\nBELIEF:\nOBSERVATION: a | b | 0.5 | 0.6')).toEqual({ entries: [], malformed: 3 });
    // 5,000 well-formed lines (a reply of ~200,000 characters): every entry kept, the rendering under its cap.
    const huge = Array.from({ length: 5000 }, (_, i) => `OBSERVATION: object ${i} | claim ${i} | 0.5`).join('\n');
    const many = entriesOf(huge);
    expect(many.entries).toHaveLength(5000);
    expect(many.entries[4999]!.id).toBe('e1.4999');
    const shown = renderBoard(many.entries, 64, agent, 'object', true);
    expect(shown.dropped).toBeGreaterThan(4900);
    expect(shown.lines[0]).toMatch(/older not shown\):$/);
    expect(shown.lines.slice(1).reduce((s, l) => s + l.length + 1, 0)).toBeLessThanOrEqual(64 * CHARS_PER_TOKEN);
    expect(shown.shown.at(-1)).toBe('e1.4999');
  });

  it('prompts: the observer reads the table and the trace; the extractor the trace alone; members see the table or the extractions, never a tool', () => {
    const [m0, o0, m1, o1, m2] = teamCalls(run('relay', 3, 'table'));
    const table = [TABLE_HEADER, '- [e1.0] agent 1 on part 1: Beijing (observation, confidence 0.9)'];
    const observer = renderTeamCall({
      call: o1!,
      size: 3,
      rounds: 1,
      question: PROMPT.question,
      reads: [
        { read: o1!.reads[0]!, text: 'OBSERVATION: part 1 | Beijing | 0.9' },
        { read: o1!.reads[1]!, text: 'Found: Beijing;\nParis.' },
      ],
      arm: 'table',
      board: table,
      dynamics: 'relay',
    });
    expect(observer.system).toBe(TEAM_SYSTEM.observer('a relay of 3 agents'));
    expect(observer.user).toBe(
      `Task: ${PROMPT.question}\n${table.join('\n')}\nTrace of agent 2: Found: Beijing; Paris.\n${OBSERVER_ASK('agent 2')}`,
    );
    const member = renderTeamCall({
      call: m2!,
      size: 3,
      rounds: 1,
      question: PROMPT.question,
      reads: m2!.reads.map((read) => ({ read, text: read.kind === 'note' ? 'Found: Beijing.' : 'OBSERVATION: part 1 | Beijing | 0.9' })),
      arm: 'table',
      board: table,
      dynamics: 'relay',
    });
    expect(member.user).toContain(`${table.join('\n')}\nHand-off note from agent 2: Found: Beijing.\n`);
    expect(member.user).not.toContain('OBSERVATION');
    const first = renderTeamCall({ call: m0!, size: 3, rounds: 1, question: PROMPT.question, reads: [], arm: 'table', dynamics: 'relay' });
    expect(first.user).not.toContain(BOARD_TOOL.slice(0, 20));
    expect(o0!.role).toBe('observer');
    expect(m1!.reads.map((r) => r.kind)).toEqual(['table', 'note']);
    // extract: the hub's aggregator reads each extraction on its own line, named by its member.
    const hub = teamCalls(run('hub', 2, 'extract'));
    const aggregator = hub.at(-1)!;
    const text = (kind: string, agentOf: number) => (kind === 'extract' ? `Established: part ${agentOf + 1}.` : '1. a\n2. b');
    const agg = renderTeamCall({
      call: aggregator,
      size: 2,
      rounds: 1,
      question: PROMPT.question,
      reads: aggregator.reads.map((read) => ({ read, text: text(read.kind, read.agent) })),
      arm: 'extract',
      dynamics: 'hub',
    });
    expect(agg.user).toContain(
      'Extracted from orchestrator: Established: part 3.\nExtracted from worker 1: Established: part 1.\nExtracted from worker 2: Established: part 2.\nYour plan: ',
    );
    const extractor = renderTeamCall({
      call: hub[4]!,
      size: 2,
      rounds: 1,
      question: PROMPT.question,
      reads: [{ read: hub[4]!.reads[0]!, text: 'Found: Beijing.' }],
      arm: 'extract',
      dynamics: 'hub',
    });
    expect(extractor.system).toBe(TEAM_SYSTEM.handoffExtractor('a hub of 2 workers and their orchestrator'));
    expect(extractor.user).toBe(`Task: ${PROMPT.question}\nTrace of worker 1: Found: Beijing.\n${EXTRACTOR_ASK}`);
  });

  it("the surrogate answers the observer's and the extractor's prompts from their text: new or changed parts, and the stance", () => {
    const [, o0, , o1] = teamCalls(run('relay', 3, 'table'));
    const ask = (call: TeamCallPlan, table: string[], trace: string, arm = 'table') => {
      const messages = renderTeamCall({
        call,
        size: 3,
        rounds: 1,
        question: PROMPT.question,
        reads: call.reads.map((read) => ({ read, text: read.kind === 'trace' ? trace : '' })),
        arm,
        board: table,
        dynamics: 'relay',
      });
      const view = readTeamCall(messages, [PROMPT])!;
      expect(view.role).toBe(arm === 'table' ? 'observer' : 'extractor');
      return teamFacts.team!(view, 1, 100, messages);
    };
    expect(ask(o0!, [TABLE_EMPTY], 'Found: Beijing. Open: 1 of 2 parts.')).toBe(
      'OBSERVATION: part 1 | Beijing | 0.9\nBELIEF: answer ready | no, 1 of 2 parts open | 0.7',
    );
    const table = [
      TABLE_HEADER,
      '- [e1.0] agent 1 on part 1: Beijing (observation, confidence 0.9)',
      '- [e1.1] agent 1 on answer ready: no, 1 of 2 parts open (belief, confidence 0.7)',
    ];
    // What the table already holds is not written again; what is new or changed is, and the stance's revision.
    expect(ask(o1!, table, 'Found: Beijing; Paris. Open: 0 of 2 parts.')).toBe(
      'OBSERVATION: part 2 | Paris | 0.9\nBELIEF: answer ready | yes, every part found | 0.7',
    );
    expect(ask(o1!, table, 'Found: Beijing. Open: 1 of 2 parts.')).toBe('Nothing new.');
    const [, e0] = teamCalls(run('relay', 3, 'extract'));
    expect(ask(e0!, [], 'Found: Paris. Open: 1 of 2 parts.', 'extract')).toBe('Established: Paris.');
  });
});
