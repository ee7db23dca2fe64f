import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseDataset, surrogateBackendSchema } from '@panta/core';
import { ReferenceJudge } from '@panta/judge';
import { HashingEncoder } from '@panta/embed';
import { SurrogateAgent, sampleSoftmax } from '../src/index.js';
import { RHEON6 } from '../../../test/helpers.js';

const prompts = parseDataset(readFileSync(RHEON6, 'utf8'), RHEON6);
const spec = surrogateBackendSchema.parse({ kind: 'surrogate' });

describe('surrogate agent', () => {
  it('is a pure function of (seed, what it reads)', () => {
    const a = new SurrogateAgent(prompts[0], spec);
    const b = new SurrogateAgent(prompts[0], spec);
    for (let seed = 0; seed < 50; seed++) {
      expect(a.reply(seed, 0.7, 'The answer is 1729.', ['I am not sure.']).text).toBe(
        b.reply(seed, 0.7, 'The answer is 1729.', ['I am not sure.']).text,
      );
    }
  });

  it('every option it words is read back as that option by the reference judge, for every rheon6 prompt', () => {
    const judge = new ReferenceJudge();
    for (const prompt of prompts) {
      const agent = new SurrogateAgent(prompt, spec);
      const f = prompt.false_answers.length;
      for (let seed = 0; seed < 400; seed++) {
        const r = agent.reply(seed, 1.6, undefined, []);
        const tag = judge.tag(prompt, r.text);
        const want = r.option === 0 ? 'correct' : r.option <= f ? 'hallucinated' : 'not_known';
        expect(tag, `${prompt.id}: ${r.text}`).toBe(want);
        expect(agent.optionOf(r.text)).toBe(r.option);
      }
    }
  });

  it('follows its neighbours at low temperature and varies its wording at high temperature', () => {
    const prompt = prompts.find((p) => p.id === 'fq367')!;
    const agent = new SurrogateAgent(prompt, spec);
    const wrong = 'The answer is 95.';
    let followed = 0;
    const texts = new Set<string>();
    for (let seed = 0; seed < 200; seed++) {
      if (agent.reply(seed, 0.1, wrong, [wrong, wrong, wrong, wrong]).text === wrong) followed++;
      texts.add(agent.reply(seed, 1.6, wrong, [wrong]).text);
    }
    expect(followed).toBeGreaterThan(190);
    expect(texts.size).toBeGreaterThan(10);
  });

  it('softmax sampling: T = 0 takes the maximum; frequencies follow exp(logit / T)', () => {
    expect(sampleSoftmax(new Float64Array([0.1, 0.9, 0.3]), 0, 0.99)).toBe(1);
    const logits = new Float64Array([0, Math.log(3)]);
    let ones = 0;
    for (let i = 0; i < 4000; i++) if (sampleSoftmax(logits, 1, (i + 0.5) / 4000) === 1) ones++;
    expect(ones / 4000).toBeCloseTo(0.75, 2);
  });
});

describe('hashing encoder', () => {
  it('is deterministic, unit-norm, 384-dimensional by default, and maps a text without words (the empty text) to a unit vector of its own', async () => {
    const enc = new HashingEncoder('hashing', 384);
    const [a, b, empty] = await enc.encode(['The answer is 96.', 'the answer is 96', '']);
    expect(a!.length).toBe(384);
    expect(Array.from(a!)).toEqual(Array.from(b!));
    expect(Math.hypot(...a!)).toBeCloseTo(1, 6);
    expect(Math.hypot(...empty!)).toBeCloseTo(1, 6);
    expect(Array.from(empty!)).not.toEqual(Array.from(a!));
    const [c] = await new HashingEncoder('h2', 384).encode(['The answer is 97.']);
    expect(Array.from(c!)).not.toEqual(Array.from(a!));
  });
});

describe('reference judge', () => {
  const judge = new ReferenceJudge();
  const fq367 = prompts.find((p) => p.id === 'fq367')!;
  it('tags accepted answers correct, known false answers hallucinated, anything else not known', () => {
    expect(judge.tag(fq367, 'She was 96 years old.')).toBe('correct');
    expect(judge.tag(fq367, 'I think she died at 95.')).toBe('hallucinated');
    expect(judge.tag(fq367, 'I do not know.')).toBe('not_known');
    expect(judge.tag(fq367, 'Either 95 or 96.')).toBe('not_known');
    expect(judge.tag(fq367, 'She was 960 months old')).toBe('not_known');
  });
});
