import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { type ChatMessages, parseDataset, surrogateBackendSchema, TEAM_SYSTEM, TEAM_TASK } from '@panta/core';
import { ROOT } from '../../../test/helpers.js';
import { type ChatRequest, checkScenario, type ScenarioModel, SurrogateAgent, SurrogateBackend, scenarioNames } from '../src/index.js';
import { startSurrogateServer } from '../src/server/app.js';

const dataset = (name: string) => parseDataset(readFileSync(join(ROOT, 'datasets', name), 'utf8'), name);
const travel = dataset('travel8.jsonl');
const claims = dataset('claims24.jsonl');
const spec = (scenario?: string) => surrogateBackendSchema.parse({ kind: 'surrogate', ...(scenario ? { scenario } : {}) });

/** A call given as text only (a team call), as the engine sends it. */
function request(messages: ChatMessages, seed: number): ChatRequest {
  return {
    messages: () => messages,
    promptLength: () => ({ system: messages.system.length, user: messages.user.length }),
    seed,
    temperature: 0.7,
    maxTokens: 256,
    fixedLength: false,
  };
}

const ask = async (backend: SurrogateBackend, messages: ChatMessages, seed = 5) => (await backend.complete(request(messages, seed))).text;
const task = (question: string, ...lines: string[]) => [`${TEAM_TASK}${question}`, ...lines].join('\n');

describe('the neutral surrogate and the scenario models', () => {
  it('the neutral agent knows no task: a travel prompt keeps the plain field, which the travel scenario (named or implied) raises', () => {
    const prompt = travel[0]!;
    expect(new SurrogateAgent(prompt, spec('neutral')).prior(0)).toBe(0.35);
    expect(new SurrogateAgent(prompt, spec('travel')).prior(0)).toBeCloseTo(1.5, 12);
    expect(new SurrogateAgent(prompt, spec()).prior(0)).toBeCloseTo(1.5, 12);
    // On a prompt of no scenario every choice is the neutral agent.
    for (const s of [undefined, ...scenarioNames()]) expect(new SurrogateAgent(claims[0]!, spec(s)).prior(0)).toBe(0.35);
  });

  it('a relay member: the team-facts scenario reports the facts it found, the neutral agent answers the task by the Potts rule', async () => {
    const prompt = claims[0]!;
    const messages = { system: TEAM_SYSTEM.relay(0, 3), user: task(prompt.question, 'You are the first agent: no note yet.') };
    expect(await ask(new SurrogateBackend(spec('team-facts'), claims), messages)).toMatch(/^Found: /);
    expect(await ask(new SurrogateBackend(spec(), claims), messages)).toMatch(/^Found: /);
    const neutral = await ask(new SurrogateBackend(spec('neutral'), claims), messages);
    expect(neutral).toBe(new SurrogateAgent(prompt, spec('neutral')).reply(5, 0.7, undefined, []).text);
  });

  it('the neutral debate: a vote names a proposal, the drift judge says DRIFT exactly when the two solutions differ', async () => {
    const prompt = claims[0]!;
    const [right, wrong] = [prompt.accepted[0]!, prompt.false_answers[0]!];
    const backend = new SurrogateBackend(spec('neutral'), claims);
    const vote = {
      system: TEAM_SYSTEM.participant(0, 3, 2, 4),
      user: task(prompt.question, 'Proposed solutions:', `1. ${right}.`, `2. ${wrong}.`),
    };
    for (let seed = 0; seed < 8; seed++) expect(await ask(backend, vote, seed)).toMatch(/^[12]$/);
    const judge = (after: string) => ({
      system: TEAM_SYSTEM.judge(),
      user: task(prompt.question, `Solution after turn 1: It is ${right}.`, `Solution after turn 2: It is ${after}.`),
    });
    expect(await ask(backend, judge(wrong))).toMatch(/^DRIFT: /);
    expect(await ask(backend, judge(right))).toMatch(/^NO DRIFT: /);
    // The debate scenario's judge sees no gold and flags at random: its verdicts differ from the neutral one's.
    const debate = new SurrogateBackend(spec('debate'), claims);
    const verdicts = await Promise.all(Array.from({ length: 16 }, (_, s) => ask(debate, judge(right), s)));
    expect(verdicts.some((v) => v.startsWith('DRIFT'))).toBe(true);
  });

  it('a scenario model is one object of hooks: what it leaves out stays the neutral agent', async () => {
    const prompt = claims[2]!;
    const sure: ScenarioModel = {
      about: 'a team that always knows the answer',
      agent: () => ({ correctField: 50 }),
      team: (view) => (view.role === 'relay' ? `Answer: ${view.prompt.accepted[0]}.` : null),
    };
    const backend = new SurrogateBackend(spec('neutral'), claims, [sure]);
    const relay = { system: TEAM_SYSTEM.relay(0, 2), user: task(prompt.question, 'You are the first agent: no note yet.') };
    expect(await ask(backend, relay)).toBe(`Answer: ${prompt.accepted[0]}.`);
    // A vote it does not take is the neutral agent's, whose field it raised: the right proposal wins.
    const vote = {
      system: TEAM_SYSTEM.participant(0, 3, 2, 4),
      user: task(prompt.question, 'Proposed solutions:', `1. ${prompt.false_answers[0]}.`, `2. ${prompt.accepted[0]}.`),
    };
    for (let seed = 0; seed < 8; seed++) expect(await ask(backend, vote, seed)).toBe('2');
  });

  it('a scenario no model answers to is refused, naming the field and the names known', () => {
    expect(scenarioNames()).toEqual(expect.arrayContaining(['neutral', 'travel', 'team-facts', 'debate']));
    expect(() => checkScenario({ kind: 'surrogate', scenario: 'nope' }, 's.yaml', 'judge.backend')).toThrow(
      `s.yaml: judge.backend.scenario: unknown surrogate scenario "nope"; fix: use one of ${scenarioNames().join(', ')}`,
    );
    for (const s of scenarioNames()) expect(() => checkScenario({ kind: 'surrogate', scenario: s }, 's.yaml', 'backend')).not.toThrow();
    expect(() => new SurrogateBackend(spec('nope'), claims)).toThrow(/unknown surrogate scenario "nope"/);
  });

  it('serve-surrogate plays the scenario it is started with, as the in-process backend does', async () => {
    const prompt = claims[1]!;
    const server = await startSurrogateServer({ prompts: claims, surrogate: { scenario: 'neutral' } });
    try {
      const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 10_000 });
      const local = new SurrogateBackend(spec('neutral'), claims);
      for (const seed of [1, 2, 3]) {
        const messages = {
          system: TEAM_SYSTEM.relay(1, 3),
          user: task(prompt.question, `Hand-off note from agent 1: ${prompt.accepted[0]}.`),
        };
        const r = await client.chat.completions.create({
          model: server.model,
          messages: [
            { role: 'system', content: messages.system },
            { role: 'user', content: messages.user },
          ],
          seed,
          temperature: 0.7,
          max_tokens: 256,
        });
        expect(r.choices[0]!.message.content).toBe(await ask(local, messages, seed));
      }
    } finally {
      await server.close();
    }
  });
});
