import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_TEMPLATE,
  InputError,
  parseDataset,
  RHEON_PREFIX_TEMPLATE,
  renderPrompt,
  rngFrom,
  type PromptContext,
  type PromptTemplate,
  type Rng,
} from '@panta/core';
import { compilePromptParser, parseRenderedPrompt } from '../src/surrogate/parse-prompt.js';
import { RHEON6 } from '../../../test/helpers.js';
import { CUSTOM_TEMPLATE } from './fixtures.js';

const prompts = parseDataset(readFileSync(RHEON6, 'utf8'), RHEON6);

/** Answers as awkward as a model's: unicode, colons, digits, the template's own words, regex syntax, empty. */
const PIECES = [
  'The answer is 96.',
  'I do not know.',
  '96 years old: she was born in 1926',
  'Émile Zola — 1840–1902 ✓',
  '北京 is the capital',
  '- Agent 12: The answer is 1729.',
  '(none)',
  '* peer #3 wrote:',
  '  > quoted <',
  'Again, Q: what?',
  '$& $1 \\1 (?<x>.*) [a-z]+',
  'Round 4. Your previous answer: 4104',
  '{{answer}} {{neighbours}}',
  'Answers of your 3 neighbours:',
  '"',
  'A:',
  '🙂🙃',
  '0',
  '-1.5e-7',
];

function answer(rng: Rng): string {
  const n = rng.int(4);
  if (n === 0 && rng.next() < 0.3) return '';
  let text = '';
  for (let i = 0; i <= n; i++) text += (i > 0 ? (rng.next() < 0.5 ? ' ' : ': ') : '') + PIECES[rng.int(PIECES.length)];
  return text;
}

function context(rng: Rng, question: string): PromptContext {
  const temperature = [0, 0.1, 0.7, 1, 1.3, 1e-7][rng.int(6)];
  if (rng.next() < 0.2) return { question, sweep: 0, temperature, neighbourAgents: [], neighbourAnswers: [] };
  const k = rng.next() < 0.15 ? 0 : 1 + rng.int(50);
  const neighbourAnswers = Array.from({ length: k }, () => answer(rng));
  return {
    question,
    sweep: 1 + rng.int(30),
    temperature,
    previous: answer(rng),
    neighbourAgents: neighbourAnswers.map(() => rng.int(100_000)),
    neighbourAnswers,
  };
}

describe('parseRenderedPrompt: the inverse of renderPrompt', () => {
  for (const [name, template] of [
    ['default', DEFAULT_TEMPLATE],
    ['custom', CUSTOM_TEMPLATE],
    ['rheon-a2-prefix', RHEON_PREFIX_TEMPLATE],
  ] as const) {
    it(`gives back question, sweep, previous answer and neighbour answers for 3000 random contexts (${name} template)`, () => {
      const rng = rngFrom(42, name);
      const questions = [...prompts.map((p) => p.question), 'Who wrote "Q: A:"? (1: 2: 3)', 'Ünïcödé — ¿qué? 42', '$1 [x] {{k}}'];
      let updates = 0;
      for (let i = 0; i < 3000; i++) {
        const ctx = context(rng, questions[rng.int(questions.length)]);
        const parsed = parseRenderedPrompt(template, renderPrompt(template, ctx));
        expect(parsed, JSON.stringify(ctx)).not.toBeNull();
        expect(parsed!.question).toBe(ctx.question);
        expect(parsed!.previous).toBe(ctx.previous);
        expect(parsed!.neighbourAnswers).toEqual(ctx.neighbourAnswers);
        expect(parsed!.neighbourAgents).toEqual(Array.from(ctx.neighbourAgents));
        expect(parsed!.sweep).toBe(ctx.sweep);
        if (ctx.previous !== undefined) updates++;
      }
      expect(updates).toBeGreaterThan(2000);
    });
  }

  it('reads a mean-field prompt with thousands of neighbours', () => {
    const answers = Array.from({ length: 5000 }, (_, i) => `The answer is ${i % 97}: ok`);
    const ctx: PromptContext = {
      question: prompts[0].question,
      sweep: 3,
      temperature: 0.7,
      previous: 'I do not know.',
      neighbourAgents: answers.map((_, i) => i),
      neighbourAnswers: answers,
    };
    expect(parseRenderedPrompt(DEFAULT_TEMPLATE, renderPrompt(DEFAULT_TEMPLATE, ctx))!.neighbourAnswers).toEqual(answers);
  });

  it('returns null for what is not a rendering of the template', () => {
    const ctx: PromptContext = {
      question: 'Q?',
      sweep: 2,
      temperature: 1,
      previous: 'a',
      neighbourAgents: [1, 2],
      neighbourAnswers: ['b', 'c'],
    };
    const m = renderPrompt(DEFAULT_TEMPLATE, ctx);
    expect(parseRenderedPrompt(DEFAULT_TEMPLATE, { ...m, system: `${m.system} ` })).toBeNull();
    expect(parseRenderedPrompt(DEFAULT_TEMPLATE, { ...m, user: 'hello' })).toBeNull();
    expect(parseRenderedPrompt(DEFAULT_TEMPLATE, { ...m, user: m.user.replace('- Agent 2: c', '- Agent two: c') })).toBeNull();
    // An answer with a newline is outside the contract: the shown k no longer matches the lines.
    const broken = renderPrompt(DEFAULT_TEMPLATE, { ...ctx, neighbourAnswers: ['b\n- Agent 9: x', 'c'] });
    expect(parseRenderedPrompt(DEFAULT_TEMPLATE, broken)).toBeNull();
    // A message of another template.
    expect(parseRenderedPrompt(CUSTOM_TEMPLATE, m)).toBeNull();
  });

  it('uses {{k}} to tell one neighbour whose line reads like no_neighbours from none', () => {
    const t: PromptTemplate = { ...DEFAULT_TEMPLATE, neighbour: '{{answer}}' };
    const one = renderPrompt(t, {
      question: 'Q?',
      sweep: 1,
      temperature: 1,
      previous: 'a',
      neighbourAgents: [4],
      neighbourAnswers: ['(none)'],
    });
    const none = renderPrompt(t, { question: 'Q?', sweep: 1, temperature: 1, previous: 'a', neighbourAgents: [], neighbourAnswers: [] });
    expect(parseRenderedPrompt(t, one)!.neighbourAnswers).toEqual(['(none)']);
    expect(parseRenderedPrompt(t, none)!.neighbourAnswers).toEqual([]);
  });

  it('reads questions over several lines when asked to', () => {
    const ctx: PromptContext = {
      question: 'Line one?\nLine two: 2',
      sweep: 4,
      temperature: 1,
      previous: 'a',
      neighbourAgents: [1],
      neighbourAnswers: ['b'],
    };
    const m = renderPrompt(DEFAULT_TEMPLATE, ctx);
    expect(parseRenderedPrompt(DEFAULT_TEMPLATE, m)).toBeNull();
    expect(compilePromptParser(DEFAULT_TEMPLATE, 't', { multilineQuestions: true }).parse(m)).toMatchObject({
      question: ctx.question,
      previous: 'a',
      neighbourAnswers: ['b'],
    });
  });

  it('refuses a template whose prompts do not carry what the agent reads', () => {
    expect(() => compilePromptParser({ ...DEFAULT_TEMPLATE, update: 'Q: {{question}}\n{{neighbours}}' }, 'my.yaml')).toThrow(InputError);
    expect(() => compilePromptParser({ ...DEFAULT_TEMPLATE, neighbour: 'Agent {{index}}' }, 'my.yaml')).toThrow(
      /my\.yaml: neighbour: .*\{\{answer\}\}/,
    );
  });
});
