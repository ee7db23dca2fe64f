import { describe, expect, it } from 'vitest';
import { DEFAULT_TEMPLATE, checkContextBudget, parseSweepSpec, planSweep, type Prompt, registerProtocol } from '../src/index.js';

// A protocol whose versions carry board entries (the belief board study's `belief-board` is one; core's tests load no study).
registerProtocol('toy-board', { about: 'a board version', reads: 'neighbours', version: 'board', population: true, teams: [], calls: [] });

const prompt: Prompt = { id: 'q', question: 'How old was she?', accepted: ['96'], false_answers: ['95'], false_premise: false, source: '' };
const spec = (geometry: string, n: number, extra = '') =>
  parseSweepSpec(
    `name: b\ndataset: d.jsonl\ngeometries: [${geometry}]\nsizes: [${n}]\ntemperatures: [0.7]\nseed: 1\nbackend: {kind: openai, base_url: "http://127.0.0.1:8000/v1", model: m, max_context_tokens: 32768}\n${extra}`,
    'b.yaml',
  );

describe('context budget', () => {
  it('a full mean field that cannot fit fails the plan and suggests sample: k', () => {
    const s = spec('meanfield', 512);
    const runs = planSweep(s, [prompt], 'b.yaml');
    expect(() => checkContextBudget(s, runs, DEFAULT_TEMPLATE, 'b.yaml')).toThrow(
      /b\.yaml: geometries\[0\]: a meanfield prompt at N = 512 may need [\d,]+ tokens .* over max_context_tokens 32,768 less the reply; fix: use \{kind: meanfield, sample: \d+\}/,
    );
  });

  it('a board version quotes up to four entries per neighbour: a mean field that fits as glauber does not with board entries', () => {
    const glauber = spec('meanfield', 128);
    expect(() => checkContextBudget(glauber, planSweep(glauber, [prompt], 'b.yaml'), DEFAULT_TEMPLATE, 'b.yaml')).not.toThrow();
    const board = spec('meanfield', 128, 'protocol: toy-board\n');
    expect(() => checkContextBudget(board, planSweep(board, [prompt], 'b.yaml'), DEFAULT_TEMPLATE, 'b.yaml')).toThrow(
      /a meanfield prompt at N = 128 may need/,
    );
  });

  it('sizes that fit pass, and the surrogate has no context limit', () => {
    const s = spec('meanfield', 128);
    expect(() => checkContextBudget(s, planSweep(s, [prompt], 'b.yaml'), DEFAULT_TEMPLATE, 'b.yaml')).not.toThrow();
    const ring = spec('ring', 4096);
    expect(() => checkContextBudget(ring, planSweep(ring, [prompt], 'b.yaml'), DEFAULT_TEMPLATE, 'b.yaml')).not.toThrow();
  });
});
