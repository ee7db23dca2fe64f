import { describe, expect, it } from 'vitest';
import {
  DEFAULT_TEMPLATE,
  PANTA_V1_TEMPLATE,
  type PromptContext,
  RHEON_PREFIX_TEMPLATE,
  RHEON_TEMPLATE,
  builtinTemplate,
  renderPrompt,
} from '../src/index.js';

const QUESTION = 'What is the sum of the cubes of the first three primes?';
/** An agent's update at sweep 4 with three neighbours (agents 7, 2 and 5). */
const UPDATE = {
  question: QUESTION,
  sweep: 4,
  temperature: 0.7,
  previous: 'It is 160.',
  neighbourAgents: [7, 2, 5],
  neighbourAnswers: ['160', 'The premise is false.', 'I do not know.'],
} satisfies PromptContext;

describe("the default agent template follows Rheon's A.2", () => {
  it('is the A.2 template; panta-v1 is the former default, both by name', () => {
    expect(DEFAULT_TEMPLATE).toBe(RHEON_TEMPLATE);
    expect(builtinTemplate('rheon-a2')).toBe(RHEON_TEMPLATE);
    expect(builtinTemplate('panta-v1')).toBe(PANTA_V1_TEMPLATE);
    expect(builtinTemplate('templates/mine.yaml')).toBeUndefined();
    expect(builtinTemplate('constructor')).toBeUndefined();
  });

  it('an initial answer shows t = 0, T and k = 0 and no peer context', () => {
    const m = renderPrompt(DEFAULT_TEMPLATE, { question: QUESTION, sweep: 0, temperature: 1.3, neighbourAgents: [], neighbourAnswers: [] });
    expect(m.user).toBe(`Question: ${QUESTION}\nt = 0, T = 1.3, k = 0\nYour answer:`);
    expect(m.system).toBe('You are one of a population of agents answering the same question.');
  });

  it("an update shows t, T and k, the agent's previous answer and its k neighbours' answers in the order given", () => {
    const m = renderPrompt(DEFAULT_TEMPLATE, UPDATE);
    expect(m.user).toBe(
      `Question: ${QUESTION}\nt = 4, T = 0.7, k = 3\nYour previous answer: It is 160.\nYour 3 neighbours' answers:\n` +
        '- Agent 7: 160\n- Agent 2: The premise is false.\n- Agent 5: I do not know.\nYour answer:',
    );
  });

  it('asks nothing A.2 does not: no length, no hint about false premises or admitting ignorance', () => {
    const text = Object.values(RHEON_TEMPLATE).join('\n').toLowerCase();
    for (const primer of ['sentence', 'short', 'premise', 'know', 'brief', 'correct', 'true']) expect(text).not.toContain(primer);
    // The former default had all of them.
    const old = Object.values(PANTA_V1_TEMPLATE).join('\n').toLowerCase();
    for (const primer of ['short sentence', 'false premise', 'do not know']) expect(old).toContain(primer);
  });
});

describe('rheon-a2-prefix: A.2 with what a run shares first', () => {
  const update = (agent: number, sweep: number, previous: string) =>
    renderPrompt(RHEON_PREFIX_TEMPLATE, {
      ...UPDATE,
      sweep,
      previous,
      neighbourAgents: UPDATE.neighbourAgents.filter((b) => b !== agent),
      neighbourAnswers: UPDATE.neighbourAnswers.filter((_, i) => UPDATE.neighbourAgents[i] !== agent),
    });

  it('is built in by name, with the system text and neighbour line of rheon-a2', () => {
    expect(builtinTemplate('rheon-a2-prefix')).toBe(RHEON_PREFIX_TEMPLATE);
    expect(RHEON_PREFIX_TEMPLATE.system).toBe(RHEON_TEMPLATE.system);
    expect(RHEON_PREFIX_TEMPLATE.neighbour).toBe(RHEON_TEMPLATE.neighbour);
  });

  it("shows A.2's facts, question, T and k and the neighbours' answers before t and the agent's previous answer", () => {
    const m = update(9, 4, 'It is 160.');
    expect(m.user).toBe(
      `Question: ${QUESTION}\nT = 0.7, k = 3\nYour 3 neighbours' answers:\n` +
        '- Agent 7: 160\n- Agent 2: The premise is false.\n- Agent 5: I do not know.\n' +
        't = 4\nYour previous answer: It is 160.\nYour answer:',
    );
    const a2 = renderPrompt(RHEON_TEMPLATE, UPDATE);
    // The same lines' facts: sorted characters agree once A.2's "t = 4, " moves to its own line.
    const sorted = (s: string) => [...s.replace(/\n/g, '')].sort().join('');
    expect(sorted(m.user)).toBe(sorted(a2.user.replace('t = 4, ', '').concat('t = 4')));
    const initial = renderPrompt(RHEON_PREFIX_TEMPLATE, {
      question: QUESTION,
      sweep: 0,
      temperature: 1.3,
      neighbourAgents: [],
      neighbourAnswers: [],
    });
    expect(initial.user).toBe(`Question: ${QUESTION}\nT = 1.3, k = 0\nt = 0\nYour answer:`);
  });

  it('two agents of a run reading the same neighbours share everything up to t; under rheon-a2 only up to t', () => {
    const shared = (a: string, b: string) => {
      let i = 0;
      while (i < a.length && a[i] === b[i]) i++;
      return i;
    };
    const a = update(9, 4, 'It is 160.');
    const b = update(8, 5, 'I do not know.');
    expect(shared(a.user, b.user)).toBe(a.user.indexOf('t = 4') + 't = '.length);
    const plain = (sweep: number, previous: string) =>
      renderPrompt(RHEON_TEMPLATE, {
        question: QUESTION,
        sweep,
        temperature: 0.7,
        previous,
        neighbourAgents: [7, 2, 5],
        neighbourAnswers: ['160', 'x', 'y'],
      }).user;
    expect(shared(plain(4, 'It is 160.'), plain(5, 'I do not know.'))).toBeLessThan(QUESTION.length + 20);
  });
});
