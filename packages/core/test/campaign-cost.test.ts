import { describe, expect, it } from 'vitest';
import { campaignCost, DEFAULT_TEMPLATE, PANTA_V1_TEMPLATE, parseSweepSpec, planSweep, type Prompt, type RunPlan } from '../src/index.js';

const PROMPT: Prompt = {
  id: 'q1',
  question: 'Is water wet?',
  accepted: ['yes'],
  false_answers: ['no'],
  false_premise: false,
};

function plan(extra: string): { spec: ReturnType<typeof parseSweepSpec>; runs: RunPlan[] } {
  const spec = parseSweepSpec(`name: c\ndataset: d.jsonl\ntemperatures: [1]\nseed: 1\n${extra}`, 'c.yaml');
  return { spec, runs: planSweep(spec, [PROMPT], 'c.yaml') };
}

const tok = (chars: number) => Math.ceil(chars / 4);

describe('campaign cost', () => {
  it("a relay's answers are its token budget split over the chain, per N, not max_tokens", () => {
    const { spec, runs } = plan('geometries: [chain]\nsizes: [2, 4]\ndynamics: relay\nteam: {token_budget: 480}\n');
    const c = campaignCost({ spec, runs, template: DEFAULT_TEMPLATE });
    expect(c.answersAtMaxTokens).toBe(false);
    expect(c.relayAnswerTokens).toEqual([
      { budget: 480, n: 2, tokens: 240, pooled: false },
      { budget: 480, n: 4, tokens: 120, pooled: false },
    ]);
    // Pooled (team.budget_rule pool): the chain's completion tokens sum to the budget, the last member's the rest.
    const pooled = plan('geometries: [chain]\nsizes: [3]\ndynamics: relay\nteam: {token_budget: 100, budget_rule: pool}\n');
    const p = campaignCost({ spec: pooled.spec, runs: pooled.runs, template: DEFAULT_TEMPLATE });
    expect(p.relayAnswerTokens).toEqual([{ budget: 100, n: 3, tokens: 33, pooled: true }]);
    expect(p.total.completionTokens).toBe(100 * pooled.runs.length);
    const mixed = plan('geometries: [chain]\nsizes: [3]\ndynamics: [relay, hub]\nteam: {token_budget: 480}\n');
    const m = campaignCost({ spec: mixed.spec, runs: mixed.runs, template: DEFAULT_TEMPLATE });
    expect(m).toMatchObject({ answersAtMaxTokens: true, relayAnswerTokens: [{ budget: 480, n: 3, tokens: 160 }] });
  });

  it('isolated agents quote no neighbour: the update shows the no_neighbours text, its own answer only', () => {
    const { spec, runs } = plan('geometries: [ring]\nsizes: [3]\nsweeps: 1\nprotocol: isolated\nmax_tokens: 7\n');
    const run = { ...runs[0], template: PANTA_V1_TEMPLATE };
    const S = PANTA_V1_TEMPLATE.system;
    const initial = tok(S.length + 'Question: Is water wet?\nYour answer:'.length);
    const update =
      tok(
        S.length +
          'Question: Is water wet?\nRound 1. Your previous answer: \nAnswers of your 0 neighbours:\n(none)\nConsidering them, give your answer again in one short sentence.\nYour answer:'
            .length,
      ) + 7;
    const c = campaignCost({ spec, runs: [run], template: DEFAULT_TEMPLATE });
    expect(c).toMatchObject({ configurations: 1, runs: 1, events: 6, fixedLength: false, answerTokens: 7 });
    expect(c.calls).toEqual([{ kind: 'agent', calls: 6, atMost: false, promptTokens: 3 * initial + 3 * update, completionTokens: 42 }]);
    expect(c.total).toEqual({ calls: 6, promptTokens: 3 * initial + 3 * update, completionTokens: 42 });
  });

  it('ssvp writes a summary per event and merges at most once per neighbour and update; a sampled mean field quotes k answers; early stopping makes every count a ceiling', () => {
    const { spec, runs } = plan('geometries: [{kind: meanfield, sample: 3}]\nsizes: [10]\nsweeps: 4\nprotocol: ssvp\nmax_tokens: 5\n');
    const c = campaignCost({ spec, runs, template: DEFAULT_TEMPLATE, callsPerSecond: 2 });
    expect(c.events).toBe(50);
    expect(c.calls.map((x) => [x.kind, x.calls, x.atMost])).toEqual([
      ['agent', 50, false],
      ['summary', 50, false],
      ['merge', 40 * 3, true],
    ]);
    expect(c.contexts).toEqual([
      expect.objectContaining({ geometry: 'meanfield-s3', n: 10, k: 3, meanNeighbours: 3, runs: 1, events: 50 }),
    ]);
    expect(c.seconds).toEqual({ agents: 25, all: (50 + 50 + 120) / 2 });
    expect(c.assumedRate).toBe(false);
    const stopping = plan('geometries: [ring]\nsizes: [4]\nsweeps: 6\nearly_stopping: {window: 2, min_sweeps: 2}\n');
    expect(campaignCost({ ...stopping, template: DEFAULT_TEMPLATE }).calls[0]).toMatchObject({ kind: 'agent', calls: 28, atMost: true });
  });

  it('prices calls where the backend has a price table (per million tokens)', () => {
    const { spec, runs } = plan(
      'geometries: [ring]\nsizes: [4]\nsweeps: 1\nmax_tokens: 10\nbackend: {kind: openai, base_url: http://127.0.0.1:9/v1, model: m, price: {prompt_per_mtok: 2, completion_per_mtok: 8}}\n',
    );
    const c = campaignCost({ spec, runs, template: DEFAULT_TEMPLATE });
    const agent = c.calls[0];
    expect(agent.cost).toBeCloseTo((agent.promptTokens * 2 + agent.completionTokens * 8) / 1e6, 12);
    expect(c.total.cost).toBeCloseTo(agent.cost!, 12);
    expect(c.assumedRate).toBe(true);
    expect(c.seconds.agents).toBe(8 / 10);
  });
});
