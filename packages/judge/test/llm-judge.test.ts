import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseDataset, parseVerdict } from '@panta/core';
import type { ChatRequest, ChatResult, LlmBackend } from '@panta/llm';
import { LlmJudge, ReferenceJudge, VerdictCache } from '../src/index.js';
import { RHEON6, tempDir } from '../../../test/helpers.js';

const prompts = parseDataset(readFileSync(RHEON6, 'utf8'), RHEON6);
const fq367 = prompts.find((p) => p.id === 'fq367')!;

/** A model that answers the rubric from a script: what it says for each response, or a thrown error. */
class ScriptedModel implements LlmBackend {
  readonly kind = 'scripted';
  readonly model = 'grader';
  readonly seen: ChatRequest[] = [];
  constructor(private readonly say: (response: string) => string | Error) {}
  async complete(request: ChatRequest): Promise<ChatResult> {
    this.seen.push(request);
    const response = /Answer to grade: (.*)\n/.exec(request.messages().user)![1];
    const out = this.say(response);
    if (out instanceof Error) throw out;
    return { text: out, finishReason: 'stop', promptTokens: 1, completionTokens: 1, calls: 1 };
  }
  async close(): Promise<void> {}
}

describe('verdict parsing', () => {
  it.each([
    ['{"tag": "correct"}', 'correct'],
    ['```json\n{"tag":"hallucinated"}\n```', 'hallucinated'],
    ['Sure. {"tag": "Not_Known"} is my verdict.', 'not_known'],
    ['{"reason": "x"} then {"verdict": "correct"}', 'correct'],
    ['hallucinated', 'hallucinated'],
    ['"correct".', 'correct'],
    ['{"tag": "maybe"}', null],
    ['The answer seems correct to me', null],
    ['{"tag": "correct"', null],
    ['', null],
  ])('%j -> %s', (text, tag) => {
    expect(parseVerdict(text)).toBe(tag);
  });
});

describe('LLM judge', () => {
  it('agrees with known tags, tags bad verdicts and failed calls judge_failure, and asks once per pair', async () => {
    const reference = new ReferenceJudge();
    const model = new ScriptedModel((response) => {
      if (response.includes('garbage')) return 'I refuse to answer in JSON';
      if (response.includes('boom')) return new Error('503 after retries');
      return `{"tag": "${reference.tag(fq367, response)}"}`;
    });
    const judge = new LlmJudge(model);
    expect(await judge.judge(fq367, 'She was 96 years old.')).toBe('correct');
    expect(await judge.judge(fq367, 'I think 95.')).toBe('hallucinated');
    expect(await judge.judge(fq367, 'I am not sure.')).toBe('not_known');
    expect(await judge.judge(fq367, 'garbage')).toBe('judge_failure');
    expect(await judge.judge(fq367, 'boom')).toBe('judge_failure');
    // same pair up to case and punctuation: cached, and concurrent duplicates share one call
    expect(await judge.judge(fq367, 'she was 96 years old')).toBe('correct');
    await Promise.all([judge.judge(fq367, 'It is 97.'), judge.judge(fq367, 'It is 97.'), judge.judge(fq367, 'it is 97')]);
    expect(model.seen).toHaveLength(6);
    expect(judge.stats).toEqual({ calls: 6, cached: 3, failures: 2 });
    expect(model.seen[0].temperature).toBe(0);
    expect(model.seen[0].messages().user).toContain('The question rests on a false premise: no');
  });

  it('keeps its cache in the corpus: a resumed sweep pays no second call, failures are asked again', async () => {
    const file = join(tempDir(), '.state', 'judge-cache.jsonl');
    let fail = true;
    const model = new ScriptedModel((r) => (r === 'flaky' && fail ? 'nonsense' : '{"tag": "correct"}'));
    const first = new LlmJudge(model, new VerdictCache(file));
    await first.judge(fq367, 'She was 96.');
    await first.judge(fq367, 'flaky');
    expect(model.seen).toHaveLength(2);
    fail = false;
    const resumed = new LlmJudge(model, new VerdictCache(file));
    expect(await resumed.judge(fq367, 'She was 96.')).toBe('correct');
    expect(model.seen).toHaveLength(2);
    expect(await resumed.judge(fq367, 'flaky')).toBe('correct');
    expect(model.seen).toHaveLength(3);
    // The file is kept open between verdicts and each line is on disk when the verdict returns; a verdict after
    // close() opens it again. Every verdict is there once, the failure not at all.
    await first.close();
    await resumed.close();
    expect(await resumed.judge(fq367, 'It was 97.')).toBe('correct');
    const lines = readFileSync(file, 'utf8').trim().split('\n');
    expect(lines.map((l) => (JSON.parse(l) as { key: string }).key.split('\u0000')[1])).toEqual(['she was 96', 'flaky', 'it was 97']);
    await resumed.close();
  });
});
