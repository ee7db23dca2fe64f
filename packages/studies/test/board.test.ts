import { describe, expect, it } from 'vitest';
import {
  appendBoardLines,
  BOARD_EMPTY,
  BOARD_TOOL,
  type BoardLogEntry,
  boardReadBy,
  boardShownTo,
  parseBoardLines,
  parseSweepSpec,
  renderBoard,
  renderTeamCall,
  SOP_FORM,
  type TeamRun,
  teamBoardEntries,
  teamCalls,
} from '@panta/core';
import { checkTeamArm, checkTeamSpec } from '../../core/src/team/spec.js';

const run = (dynamics: 'relay' | 'hub', n: number, protocol: string): TeamRun =>
  ({ n, sweeps: 1, dynamics, protocol, population: undefined, controls: {} }) as unknown as TeamRun;

const agent = (a: number) => `agent ${a + 1}`;

describe('the belief board of paper 001 (append-only, shared, rendered under a cap)', () => {
  it('reads BELIEF lines as object | claim | confidence; any other BELIEF line is malformed, ignored and counted', () => {
    const reply = [
      'Found: Paris.',
      'BELIEF: capital | Paris | 0.9',
      'belief:  Capital  of  France | Paris,   France | .5',
      'BELIEF: only two | fields',
      'BELIEF: conf | too high | 1.5',
      'BELIEF:  | empty object | 0.3',
      'BELIEF: word | confidence | high',
      'Open: 0 of 1 parts.',
    ].join('\n');
    const parsed = parseBoardLines(reply);
    expect(parsed.lines).toEqual([
      { object: 'capital', claim: 'Paris', confidence: 0.9 },
      { object: 'Capital of France', claim: 'Paris, France', confidence: 0.5 },
    ]);
    expect(parsed.malformed).toBe(4);
    expect(parsed.rest).toBe('Found: Paris.\nOpen: 0 of 1 parts.');
    expect(parseBoardLines('no board here')).toEqual({ lines: [], malformed: 0, rest: 'no board here' });
  });

  it('a revision appends an entry pointing at the latest entry on its object (any author, case and spacing ignored); nothing is removed', () => {
    const first = appendBoardLines([], { event: 0, step: 0, author: 0 }, [
      { object: 'part 1', claim: 'Paris', confidence: 0.9 },
      { object: 'part 2', claim: 'Rome', confidence: 0.7 },
    ]);
    expect(first.map((e) => [e.id, e.revises])).toEqual([
      ['e0.0', null],
      ['e0.1', null],
    ]);
    const second = appendBoardLines(first, { event: 1, step: 1, author: 1 }, [
      { object: 'Part  1', claim: 'Lyon', confidence: 0.8 },
      { object: 'part 3', claim: 'Oslo', confidence: 0.6 },
      { object: 'PART 1', claim: 'Paris', confidence: 0.9 },
    ]);
    expect(second).toEqual([
      { id: 'e1.0', step: 1, author: 1, object: 'Part  1', claim: 'Lyon', confidence: 0.8, revises: 'e0.0' },
      { id: 'e1.1', step: 1, author: 1, object: 'part 3', claim: 'Oslo', confidence: 0.6, revises: null },
      // Its own earlier line counts: the second revision of part 1 points at e1.0, not e0.0.
      { id: 'e1.2', step: 1, author: 1, object: 'PART 1', claim: 'Paris', confidence: 0.9, revises: 'e1.0' },
    ]);
  });

  it('renders the latest entry per object, marks revisions with the claim they replace, and drops the oldest objects beyond the cap', () => {
    const board: BoardLogEntry[] = [
      { id: 'e0.0', step: 0, author: 0, object: 'a', claim: 'x', confidence: 0.9, revises: null },
      { id: 'e0.1', step: 0, author: 0, object: 'b', claim: 'y', confidence: 0.5, revises: null },
      { id: 'e1.0', step: 1, author: 1, object: 'A', claim: 'z', confidence: 0.8, revises: 'e0.0' },
    ];
    const lineB = '- [e0.1] agent 1 on b: y (confidence 0.5)';
    const lineA = '- [e1.0] agent 2 on A: z (confidence 0.8) [revised; was "x" by agent 1]';
    expect(renderBoard(board, 1000, agent)).toEqual({
      lines: ['Belief board (shared, append-only; the latest entry per object):', lineB, lineA],
      shown: ['e0.1', 'e1.0'],
      dropped: 0,
    });
    // lineA is 71 characters (+1 newline): a cap of 18 tokens (72 characters) holds it, not lineB (41 + 1) too.
    expect([lineA.length, lineB.length]).toEqual([71, 41]);
    expect(renderBoard(board, 18, agent).shown).toEqual(['e1.0']);
    expect(renderBoard(board, 17, agent)).toEqual({
      lines: ['Belief board (shared, append-only; the latest entry per object; 2 older not shown):'],
      shown: [],
      dropped: 2,
    });
    expect(renderBoard(board, 19, agent)).toEqual({
      lines: ['Belief board (shared, append-only; the latest entry per object; 1 older not shown):', lineA],
      shown: ['e1.0'],
      dropped: 1,
    });
    // Both need 72 + 42 = 114 characters: 29 tokens (116) hold them, 28 (112) do not.
    expect(renderBoard(board, 29, agent).dropped).toBe(0);
    expect(renderBoard(board, 28, agent).dropped).toBe(1);
    expect(renderBoard([], 10, agent)).toEqual({ lines: [BOARD_EMPTY], shown: [], dropped: 0 });
    // board_inert: the same board is never shown.
    expect(boardShownTo('board_inert', board, 1000, agent)).toEqual({ lines: [], shown: [], dropped: 0 });
  });

  it('relay members read every earlier call in the board and full arms; hub workers revise the orchestrator, never each other', () => {
    expect(teamCalls(run('relay', 3, 'glauber'))[2]!.reads.map((r) => [r.event, r.kind])).toEqual([[1, 'note']]);
    expect(teamCalls(run('relay', 3, 'board'))[2]!.reads.map((r) => [r.event, r.kind])).toEqual([
      [0, 'board'],
      [1, 'note'],
    ]);
    expect(teamCalls(run('relay', 3, 'full'))[2]!.reads.map((r) => [r.event, r.kind])).toEqual([
      [0, 'output'],
      [1, 'note'],
    ]);
    expect(teamCalls(run('relay', 3, 'sop'))[2]!.reads.map((r) => r.event)).toEqual([1]);
    const calls = teamCalls(run('hub', 2, 'board'));
    const replies = new Map<number, string>([
      [0, '1. a\n2. b\nBELIEF: plan | two parts | 1'],
      [1, 'Found: x.\nBELIEF: plan | three parts | 0.6\nBELIEF: part 1 | x | 0.9'],
      [2, 'Found: y.\nBELIEF: part 1 | y | 0.9'],
      [3, 'Answer: x.'],
    ]);
    const written = teamBoardEntries(calls, replies);
    expect(written.get(1)!.entries.map((e) => [e.id, e.revises])).toEqual([
      ['e1.0', 'e0.0'],
      ['e1.1', null],
    ]);
    // Worker 2 ran beside worker 1 and never read its entry on part 1.
    expect(written.get(2)!.entries.map((e) => [e.id, e.revises])).toEqual([['e2.0', null]]);
    expect(boardReadBy(calls[3]!, written).map((e) => e.id)).toEqual(['e0.0', 'e1.0', 'e1.1', 'e2.0']);
  });

  it('prompts: the board beside the hand-off and the tool in board arms, the sop form, full outputs; the plain relay unchanged', () => {
    const calls = teamCalls(run('relay', 3, 'board'));
    const input = {
      call: calls[2]!,
      size: 3,
      rounds: 1,
      question: 'Q?',
      reads: [
        { read: calls[2]!.reads[0]!, text: 'Found: a.\nBELIEF: part 1 | a | 0.9' },
        { read: calls[2]!.reads[1]!, text: 'Found: b.\nBELIEF: part 2 | b | 0.9' },
      ],
    };
    const board = renderBoard(teamBoardEntries(calls, new Map(input.reads.map((r) => [r.read.event, r.text]))).get(1)!.entries, 100, agent);
    const shown = renderTeamCall({ ...input, arm: 'board', board: board.lines }).user;
    expect(shown).toContain('- [e1.0] agent 2 on part 2: b (confidence 0.9)');
    expect(shown).toContain('Hand-off note from agent 2: Found: b.\n');
    expect(shown).not.toContain('BELIEF: part 2');
    // The last member answers: it reads the board, and is not offered the tool (nobody reads its entries).
    expect(shown).not.toContain(BOARD_TOOL);
    const middle = renderTeamCall({ ...input, call: calls[1]!, reads: [input.reads[0]!], arm: 'board_inert' }).user;
    expect(middle).toContain(BOARD_TOOL);
    expect(middle).not.toContain('Belief board');
    const sop = teamCalls(run('relay', 3, 'sop'));
    expect(renderTeamCall({ ...input, call: sop[1]!, reads: [{ read: sop[1]!.reads[0]!, text: 'n' }], arm: 'sop' }).user).toContain(
      SOP_FORM,
    );
    const full = teamCalls(run('relay', 3, 'full'));
    expect(
      renderTeamCall({ ...input, call: full[2]!, reads: input.reads.map((r, i) => ({ ...r, read: full[2]!.reads[i]! })), arm: 'full' })
        .user,
    ).toContain('Output of agent 1: Found: a. BELIEF: part 1 | a | 0.9\n');
    const plain = teamCalls(run('relay', 3, 'glauber'));
    expect(renderTeamCall({ ...input, call: plain[1]!, reads: [{ read: plain[1]!.reads[0]!, text: 'note' }] }).user).toBe(
      'Task: Q?\nHand-off note from agent 1: note\nWork on the task, then write a short hand-off note for the next agent in one line: what you found, and what is left to do.',
    );
  });

  it('refuses the relay and hub arms on populations and debates, naming protocol and the fix', () => {
    const spec = parseSweepSpec(
      'name: x\ndataset: d.jsonl\ngeometries: [chain]\nsizes: [3]\ntemperatures: [0.7]\nbackend: {kind: surrogate}\nencoders: [{name: h, kind: hashing, dim: 8}]\njudge: {kind: reference}\n',
      's.yaml',
    );
    expect(() => checkTeamArm(spec, 'asynchronous', 'board', 's.yaml')).toThrow(
      /protocol.*board is a relay and hub arm.*use it with dynamics: relay or hub/,
    );
    expect(() => checkTeamArm(spec, 'debate', 'sop', 's.yaml')).toThrow(
      /debate runs take protocol glauber, drift-policy, (drift-policy-gold, )?regenerate, not sop/,
    );
    expect(() => checkTeamArm(spec, 'hub', 'board_inert', 's.yaml')).not.toThrow();
    const capped = (protocol: string) =>
      parseSweepSpec(
        `name: x\ndataset: d.jsonl\ngeometries: [chain]\nsizes: [3]\ntemperatures: [0.7]\ndynamics: relay\nprotocol: ${protocol}\nteam: {board_tokens: 64}\nbackend: {kind: surrogate}\nencoders: [{name: h, kind: hashing, dim: 8}]\njudge: {kind: reference}\n`,
        's.yaml',
      );
    expect(() => checkTeamSpec(capped('[glauber, board_inert]'), ['relay'], 's.yaml')).toThrow(
      /s\.yaml.*team\.board_tokens.*add protocol: board or table, or remove team\.board_tokens/,
    );
    expect(() => checkTeamSpec(capped('[glauber, board]'), ['relay'], 's.yaml')).not.toThrow();
    expect(() => checkTeamSpec(capped('[glauber, table]'), ['relay'], 's.yaml')).not.toThrow();
  });
});
