import { describe, expect, it } from 'vitest';
import { isJudgeKind, registerJudgeCalls } from '@panta/core';
import { addedTables, registerTable } from '@panta/corpus';
import { registerScenario, scenarioNames } from '@panta/llm';
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
});
