import { describe, expect, it } from 'vitest';
import { RHEON_TEMPLATE, configArms, parseSweepSpec, planSweep, type Prompt, type PromptTemplate } from '../src/index.js';

const prompt: Prompt = { id: 'q', question: 'How old was she?', accepted: ['96'], false_answers: ['95'], false_premise: false, source: '' };
const spec = (extra = '') =>
  parseSweepSpec(
    `name: arms\ndataset: d.jsonl\ngeometries: [ring]\nsizes: [8]\ntemperatures: [0.7]\ntrials: 2\nseed: 1\n${extra}`,
    'a.yaml',
  );
const ids = (extra = '') => planSweep(spec(extra), [prompt], 'a.yaml').map((r) => r.runId);

describe('gridded arms: dynamics, template, population', () => {
  it('a single value of each keeps the run ids (and seeds) a sweep without the axes has', () => {
    const plain = planSweep(spec(), [prompt], 'a.yaml');
    const single = planSweep(
      spec('dynamics: asynchronous\ntemplate: rheon-a2\npopulation: {file: people.jsonl, assign: fraction}\n'),
      [prompt],
      'a.yaml',
    );
    expect(single.map((r) => [r.runId, r.seed])).toEqual(plain.map((r) => [r.runId, r.seed]));
    expect(plain.map((r) => r.runId)).toEqual(['q-ring-n8-T0.7-glauber-t0', 'q-ring-n8-T0.7-glauber-t1']);
    expect(plain.every((r) => r.arms === undefined)).toBe(true);
    // synchronous as a single value keeps its -sync, as it always had
    expect(ids('dynamics: synchronous\n')).toEqual(['q-ring-n8-T0.7-glauber-sync-t0', 'q-ring-n8-T0.7-glauber-sync-t1']);
  });

  it('dynamics as a list: one run per arm, with the ids each arm has alone (and so the same seeds)', () => {
    const both = planSweep(spec('dynamics: [asynchronous, synchronous]\n'), [prompt], 'a.yaml');
    expect(both.map((r) => [r.runId, r.dynamics])).toEqual([
      ['q-ring-n8-T0.7-glauber-t0', 'asynchronous'],
      ['q-ring-n8-T0.7-glauber-t1', 'asynchronous'],
      ['q-ring-n8-T0.7-glauber-sync-t0', 'synchronous'],
      ['q-ring-n8-T0.7-glauber-sync-t1', 'synchronous'],
    ]);
    const alone = [...planSweep(spec(), [prompt], 'a.yaml'), ...planSweep(spec('dynamics: synchronous\n'), [prompt], 'a.yaml')];
    expect(both.map((r) => r.seed)).toEqual(alone.map((r) => r.seed));
  });

  it('template and population lists name their arms in the config id, in grid order, and runs carry their files', () => {
    const s = spec(
      'template: [rheon-a2, prompts/short.yaml]\npopulation: [{name: none}, {file: beliefs/probe.jsonl, assign: fraction, fraction: 0.25}]\n',
    );
    const short: PromptTemplate = { ...RHEON_TEMPLATE, system: 'Short.' };
    const probe = [{ id: 'p', belief: '95' }];
    const runs = planSweep(s, [prompt], 'a.yaml', new Map(), { templates: [RHEON_TEMPLATE, short], populations: [undefined, probe] });
    expect(runs.map((r) => r.configId).filter((_, i) => i % 2 === 0)).toEqual([
      'q-ring-n8-T0.7-glauber-tpl-rheon-a2-pop-none',
      'q-ring-n8-T0.7-glauber-tpl-rheon-a2-pop-probe',
      'q-ring-n8-T0.7-glauber-tpl-short-pop-none',
      'q-ring-n8-T0.7-glauber-tpl-short-pop-probe',
    ]);
    const last = runs.at(-1)!;
    expect(last.template).toBe(short);
    expect(last.population).toEqual({ entries: probe, assign: 'fraction', fraction: 0.25 });
    expect(last.arms).toEqual({ template: 'short', population: 'probe' });
    expect(runs[0].population).toBeUndefined();
    expect(configArms(last.configId)).toEqual({ template: 'short', population: 'probe' });
    expect(configArms('q-ring-n8-T0.7-glauber-sync')).toEqual({});
    // Planned without the files (verify, merge): the same ids and seeds.
    expect(planSweep(s, [prompt], 'a.yaml').map((r) => [r.runId, r.seed])).toEqual(runs.map((r) => [r.runId, r.seed]));
  });

  it('a repeated arm, or two arms with one name, is refused at the repeat', () => {
    expect(() => spec('dynamics: [synchronous, synchronous]\n')).toThrow(/a\.yaml: dynamics\[1\]: "synchronous" is listed twice/);
    expect(() => spec('template: [a/short.yaml, b/short.txt]\n')).toThrow(
      /a\.yaml: template\[1\]: template "b\/short.txt" \(arm name "short"\) is listed twice \(first at index 0\)/,
    );
    expect(() => spec('population: [{}, {name: none}]\n')).toThrow(/a\.yaml: population\[1\]: population arm "none" is listed twice/);
    expect(() => spec('population: [{name: "a b"}]\n')).toThrow(/a\.yaml: population\[0\]\.name: /);
  });
});
