import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROTOCOL_SYSTEM, RUBRIC_SYSTEM } from '@panta/core';
import { panta, ROOT, tempDir, writeSpec, RHEON6, pantaInProcess as cli } from '../../../test/helpers.js';

/** `panta plan ARGS` in this process (relative paths from the repository's root, as the binary's cwd in these tests). */
const plan = async (args: string[]) => {
  const r = await cli(['plan', ...args.map((a) => (a.startsWith('examples/') ? join(ROOT, a) : a))]);
  return { ...r, json: r.code === 0 && args.includes('--json') ? JSON.parse(r.stdout) : undefined };
};

describe('panta plan', () => {
  it("eraclitus: the paper's 432 configurations and 2,160 runs, every event and call counted before anything runs", async () => {
    const r = await plan(['examples/eraclitus.yaml']);
    expect(r.code).toBe(0);
    // 6 prompts x 6 temperatures x 5 trials, 11 events per agent (t = 0 and 10 sweeps), over the twelve
    // (geometry, N) pairs: ring, torus2d and meanfield 16 + 64 + 256 = 336 each, torus3d 27 + 64 + 216 = 307.
    const events = 6 * 6 * 5 * 11 * (3 * 336 + 307);
    expect(events).toBe(2_603_700);
    expect(r.stdout).toContain('eraclitus: 432 configurations, 2,160 runs, 2,603,700 events');
    expect(r.stdout).toMatch(/^agent +2,603,700 /m);
    expect(r.stdout).toMatch(/^judge \(at most\) +2,603,700 /m);
    expect(r.stdout).toContain('Time at 10 calls/s (assumed; give yours with --calls-per-s R)');
    expect(r.stdout).toMatch(/Largest update prompt: about 2\d,\d{3} tokens, within max_context_tokens 32,768 less the reply/);
    const j = (await plan(['examples/eraclitus.yaml', '--json', '--calls-per-s', '40'])).json;
    expect(j).toMatchObject({ configurations: 432, runs: 2160, events, answerTokens: 100, fixedLength: true, callsPerSecond: 40 });
    expect(j.assumedRate).toBe(false);
    expect(j.contextLimit).toBe(32_768);
    expect(j.calls.map((c: { kind: string; calls: number }) => [c.kind, c.calls])).toEqual([
      ['agent', events],
      ['judge', events],
    ]);
    expect(j.seconds).toEqual({ agents: events / 40, all: (2 * events) / 40 });
    // The largest prompt, a mean field of 256 quoting 255 answers of 100 tokens and the agent's own, fits 32k.
    const largest = j.contexts.find((c: { geometry: string; n: number }) => c.geometry === 'meanfield' && c.n === 256);
    expect(largest.k).toBe(255);
    expect(largest.updatePromptTokens).toBeGreaterThan(256 * 100);
    expect(largest.updatePromptTokens).toBeLessThan(32_768 - 100);
  });

  it('adaptive temperatures: priced at start + add x rounds temperatures per group, and said so', async () => {
    const dir = tempDir();
    const spec = writeSpec(
      dir,
      `name: ad\ndataset: ${RHEON6}\nprompts: [fq117]\ngeometries: [ring, meanfield]\nsizes: [16]\ntrials: 2\nsweeps: 3\n` +
        'temperatures: {adaptive: {range: [0.2, 1.4], start: 4, add: 2, rounds: 3, target: rho-min}}\n',
    );
    const r = await plan([spec]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      'adaptive temperatures (rho-min over [0.2, 1.4]): 4 to start, 2 added in each of 3 rounds; the maximum cost below counts 10 temperatures per configuration group',
    );
    // 2 geometries x 10 temperatures x 2 trials, 16 x 4 events each.
    expect(r.stdout).toContain('ad: 20 configurations, 40 runs, 2,560 events');
    expect((await plan([spec, '--json'])).json.adaptive).toEqual({
      range: [0.2, 1.4],
      start: 4,
      add: 2,
      rounds: 3,
      target: 'rho-min',
      max_temperatures: 10,
    });
  });

  it('a small sweep: calls and tokens as computed by hand from the template, the rubric and the protocol prompts', async () => {
    const dir = tempDir();
    const spec = writeSpec(
      dir,
      `name: tiny
dataset: ${RHEON6}
prompts: [fq367]
geometries: [ring, star]
sizes: [5]
temperatures: [0.5]
trials: 2
sweeps: 3
seed: 1
protocol: [glauber, drift-policy]
max_tokens: 10
fixed_length: true
judge: {kind: llm, backend: {kind: surrogate}}
`,
    );
    const j = (await plan([spec, '--json', '--calls-per-s', '4'])).json;
    // 2 geometries x 2 protocols; 2 trials; (3 + 1) x 5 events a run.
    expect(j).toMatchObject({ configurations: 4, runs: 8, events: 8 * 20 });
    const Q = 'How old was Queen Elizabeth II when she died?';
    const S = 'You are one of a population of agents answering the same question.';
    const tok = (chars: number) => Math.ceil(chars / 4);
    // t = 0: the question alone, k = 0.
    const initial = tok(S.length + `Question: ${Q}\nt = 0, T = 0.5, k = 0\nYour answer:`.length);
    // An update quotes its previous answer and its neighbours' (10 tokens each); indices counted as N - 1 = 4.
    const frame = (k: number) =>
      S.length +
      `Question: ${Q}\nt = 3, T = 0.5, k = ${k}\nYour previous answer: \nYour ${k} neighbours' answers:\n${Array(k).fill('- Agent 4: ').join('\n')}\nYour answer:`
        .length;
    const ring = tok(frame(2)) + 3 * 10;
    // A star of 5: the hub reads 4, each leaf 1: 8 / 5 = 1.6 answers on average (one more line, 12 characters, per answer).
    const star = tok(frame(1) + 0.6 * '\n- Agent 4: '.length) + 2.6 * 10;
    const perRun = (update: number) => 5 * initial + 15 * update;
    const agent = j.calls.find((c: { kind: string }) => c.kind === 'agent');
    expect(agent).toEqual({
      kind: 'agent',
      calls: 160,
      atMost: false,
      promptTokens: 4 * perRun(ring) + 4 * perRun(star),
      completionTokens: 1600,
    });
    // The LLM judge: one rubric per answer at most (its cache judges an identical answer once), 32-token verdicts.
    const rubric =
      RUBRIC_SYSTEM.length +
      `Question: ${Q}\nAccepted answers: 96 | 96 years old\nKnown false answers: 95 | 97\nThe question rests on a false premise: no\nAnswer to grade: \nVerdict (JSON):`
        .length;
    const judge = j.calls.find((c: { kind: string }) => c.kind === 'judge');
    expect(judge).toEqual({ kind: 'judge', calls: 160, atMost: true, promptTokens: 160 * (tok(rubric) + 10), completionTokens: 160 * 32 });
    // drift-policy: a drift judge at the boundaries after sweeps 1 and 2 of each of its 4 runs, a moderator after a drift.
    const drift =
      PROTOCOL_SYSTEM.length +
      `Question: ${Q}\nMajority answer after round 2: \nMajority answer after round 3: \nHas the group drifted away from the question or from its earlier answer? Reply DRIFT or STABLE, then give one short reason.`
        .length;
    expect(j.calls.find((c: { kind: string }) => c.kind === 'drift-judge')).toEqual({
      kind: 'drift-judge',
      calls: 8,
      atMost: false,
      promptTokens: 8 * (tok(drift) + 20),
      completionTokens: 80,
    });
    expect(j.calls.find((c: { kind: string }) => c.kind === 'moderator')).toMatchObject({ calls: 8, atMost: true, completionTokens: 80 });
    expect(j.total.calls).toBe(160 + 160 + 8 + 8);
    expect(j.seconds).toEqual({ agents: 160 / 4, all: 336 / 4 });
    const text = await plan([spec, '--calls-per-s', '4']);
    expect(text.stdout).toContain("Time at 4 calls/s: the agents' calls 40 s; every call through the same rate: 1 min 24 s.");
    expect(text.stdout).toMatch(/^star +5 +4 +4 +80 +\d+$/m);
  });

  it('a team relay: one event per call, and the budget rule printed (pooled by default, split when the spec says so), not max_tokens', async () => {
    const r = await plan(['examples/lost-in-propagation.yaml']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^lost-in-propagation: 208 configurations, 624 runs, 2,808 events \(team schedules: one event per call\)$/m);
    expect(r.stdout).toMatch(
      /^Answers: relay members: team\.token_budget 480 pooled over the chain \(budget_rule: pool\): member k of N writes at most what the members before it left, divided over the N - k \+ 1 members still to write, the last all that is left; the chain writes at most 480 tokens at every N \(N = 1, 2, 3, 4, 5, 6, 7, 8\); /m,
    );
    expect(r.stdout).not.toMatch(/Answers: \d+ tokens each/);
    const dir = tempDir();
    const split = writeSpec(
      dir,
      readFileSync(join(ROOT, 'examples', 'lost-in-propagation.yaml'), 'utf8')
        .replaceAll('../datasets/', `${ROOT}/datasets/`)
        .replace('team: {token_budget: 480}', 'team: {token_budget: 480, budget_rule: split}'),
    );
    expect((await plan([split])).stdout).toMatch(
      /^Answers: relay members: team\.token_budget 480 split over the chain \(budget_rule: split\), 480 at N = 1, 240 at N = 2, 160 at N = 3, .* 60 at N = 8 tokens each; /m,
    );
  });

  it('fails as panta run does on a bad spec: one line naming the file and field, exit 2', async () => {
    const dir = tempDir();
    const tooWide = writeSpec(
      dir,
      `name: wide
dataset: ${RHEON6}
prompts: [fq117]
geometries: [meanfield]
sizes: [512]
temperatures: [0.7]
backend: {kind: openai, base_url: http://127.0.0.1:9/v1, model: m, max_context_tokens: 32768}
`,
    );
    const r = await plan([tooWide]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/spec\.yaml: geometries\[0\]: .*max_context_tokens 32,768.*fix: use \{kind: meanfield, sample: \d+\}/);
    const badSize = await plan([
      writeSpec(dir, `name: t\ndataset: ${RHEON6}\ngeometries: [torus2d]\nsizes: [10]\ntemperatures: [0.7]\n`, 'torus.yaml'),
    ]);
    expect(badSize.code).toBe(2);
    expect(badSize.stderr).toMatch(/torus\.yaml: sizes\[0\]: /);
    const rate = panta(['plan', 'examples/eraclitus.yaml', '--calls-per-s', '0']);
    expect(rate.code).toBe(2);
    expect(rate.stderr).toMatch(/--calls-per-s/);
  });

  it('--gpu prices GPU time: agents and judge GPU-hours, the critical path, useful GPUs and the wall clock on --gpus G', async () => {
    const j = (await plan(['examples/eraclitus.yaml', '--json', '--gpu', 'h100-qwen3-14b', '--gpus', '64'])).json;
    expect(j.runs).toBe(2160);
    expect(j).toMatchObject({ model: 'h100-qwen3-14b', judge_model: 'h100-qwen3-14b', gpus: 64, neighbour_order: 'per-event' });
    for (const k of ['gpu_hours', 'judge_gpu_hours', 'critical_path_hours', 'useful_gpus', 'wall_hours'])
      expect(j[k], k).toBeGreaterThan(0);
    expect(j.wall_hours).toBeCloseTo(Math.max((j.gpu_hours + j.judge_gpu_hours) / 64, j.critical_path_hours), 9);
    expect(j.useful_gpus).toBeCloseTo((j.gpu_hours + j.judge_gpu_hours) / j.critical_path_hours, 9);
    // The mean field of 256: most of the GPU time, and the longest chain (10 sweeps of 256 updates after one initial answer).
    const mf = j.groups.find((g: { geometry: string; n: number }) => g.geometry === 'meanfield' && g.n === 256);
    expect(mf.share).toBeGreaterThan(0.75);
    expect(j.critical_path_calls).toBe(2561);
    // Agents' prefill alone: 180 runs x 2,560 updates x their prompt tokens (less the cached ones) at 88 us a token.
    expect(mf.gpu_hours).toBeGreaterThan((180 * 2560 * (mf.update_prompt_tokens - mf.update_cached_tokens) * 88e-6) / 3600);
    // A judge on an H200 model file: its hours change, the agents' do not.
    const dir = tempDir();
    const file = writeSpec(dir, '{"base": "h100-qwen3-14b", "prefillUsPerToken": 176, "decodeUsPerToken": 440}', 'judge.json');
    const slow = (await plan(['examples/eraclitus.yaml', '--json', '--gpu', 'h100-qwen3-14b', '--judge-gpu', file])).json;
    expect(slow.gpu_hours).toBe(j.gpu_hours);
    expect(slow.judge_gpu_hours).toBeCloseTo(2 * j.judge_gpu_hours, 6);
    expect(slow.wall_hours).toBeCloseTo(slow.gpu_hours + slow.judge_gpu_hours, 6);
    const text = await plan(['examples/eraclitus.yaml', '--gpu', 'h200-qwen3-14b']);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^meanfield +256 +180 +26,5\d\d +\d+ /m);
    expect(text.stdout).toMatch(
      /Critical path: 2,561 calls in a chain, [\d.]+ h on an idle GPU; beyond about [\d,]+ GPUs the sweep finishes no sooner\./,
    );
    expect(text.stdout).toContain('Wall clock on 1 GPU (give yours with --gpus G)');
  });

  it('a bad --gpu, --judge-gpu or --gpus is one line naming it, exit 2', async () => {
    const dir = tempDir();
    const cases: [string[], RegExp][] = [
      [
        ['--gpu', 'a100-llama'],
        /^panta: --gpu: "a100-llama" is neither a built-in cost model nor a file; fix: use one of h100-qwen3-14b, h200-qwen3-14b/,
      ],
      [
        ['--gpu', writeSpec(dir, '{"prefillUsPerToken": -1}', 'neg.json')],
        /neg\.json: prefillUsPerToken: must be a positive number .*fix: /,
      ],
      [
        ['--gpu', 'h100-qwen3-14b', '--judge-gpu', writeSpec(dir, '{"kvCache": 1}', 'typo.json')],
        /typo\.json: kvCache: unknown field; fix: /,
      ],
      [['--gpus', '8'], /^panta: --gpus: prices GPU time only with --gpu; fix: add --gpu NAME_OR_FILE/],
    ];
    for (const [args, message] of cases) {
      const r = await plan(['examples/eraclitus.yaml', ...args]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(message);
    }
  });
});
