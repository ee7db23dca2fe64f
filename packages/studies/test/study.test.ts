import { describe, expect, it } from 'vitest';
import { isBoardProtocol, isJudgeKind, PROTOCOL_NAMES, registerJudgeCalls, registerProtocol } from '@panta/core';
import { armOf, teamArms } from '../../core/src/protocol/registry.js';
import { addedTables, registerTable } from '@panta/corpus';
import { impliedScenarios, registerScenario, scenarioNames } from '@panta/llm';
import { BOARD_PROTOCOLS } from '../src/board/index.js';
import { registerStudy, STUDIES } from '../src/index.js';

describe('a study registers its parts into the library registries', () => {
  it('loading @panta/studies registers the travel study: its scenario, its table and its judge calls; once only', () => {
    const travel = STUDIES.find((s) => s.name === 'travel')!;
    expect(scenarioNames()).toContain('travel');
    expect(addedTables().map((t) => t.name)).toContain('travel');
    expect(isJudgeKind('travel-judge')).toBe(true);
    expect(isJudgeKind('agent')).toBe(false);
    // Registering the study again is a no-op; registering its parts again is refused by each registry.
    expect(() => registerStudy(travel)).not.toThrow();
    expect(() => registerScenario('travel', travel.scenario!)).toThrow('surrogate scenario "travel" is already registered');
    expect(() => registerTable(travel.tables![0]!)).toThrow('corpus table "travel" is already registered');
    expect(() => registerJudgeCalls(travel.judgeCalls![0]!)).toThrow('judge call kind "travel-judge" is already registered');
  });

  it('the teams study registers its scenarios, played as before by a surrogate naming none; the board study its protocols', () => {
    expect(scenarioNames()).toEqual(expect.arrayContaining(['team-facts', 'debate']));
    expect(impliedScenarios()).toEqual(['travel', 'team-facts', 'debate']);
    // The board protocols follow the built-in ones, in the study's order; the relay and hub arms keep theirs.
    expect(PROTOCOL_NAMES.slice(-8)).toEqual(['belief-board', 'board', 'board_inert', 'full', 'sop', 'table', 'extract', 'down']);
    expect(teamArms('relay')).toEqual(['glauber', 'board', 'board_inert', 'full', 'sop', 'table', 'extract', 'down']);
    expect(isBoardProtocol('belief-board')).toBe(true);
    expect(armOf('board_inert')).toEqual({ board: 'inert' });
    expect(() => registerProtocol('board', BOARD_PROTOCOLS.board)).toThrow('protocol board is already registered');
  });
});
