import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { TEAMS_TABLE, type TeamTableRow, teamsTablePath, writeParquetTable } from '@panta/corpus';
import { runSweep } from '@panta/engine';
import { writeReport, type ReportResult } from '@panta/report';
import { beforeAll, describe, expect, it } from 'vitest';
import { RHEON6, tempDir, writeSpec } from '../../../test/helpers.js';
import { expectCatalogued } from './catalogued.js';

/**
 * A small team table written by hand after docs/teams.md (relay answers at N = 1, 2, 3 with belief arms;
 * debates of 3 turns in arms none and drift-policy), put beside a tiny population corpus so the report has a
 * manifest to read. Every number the tests expect is computed by hand in the comments.
 */
type RowInput = Pick<TeamTableRow, 'trial' | 'prompt_id' | 'n' | 'dynamics' | 'arm' | 'turn' | 'exact_match' | 'fact_recall'> & {
  population_arm?: string | null;
  focus?: number | null;
  drifting?: boolean;
  drift_onset?: number | null;
  recovered?: boolean | null;
  judge_verdict?: TeamTableRow['judge_verdict'];
  run?: string;
};

let seq = 0;
function row(p: RowInput): TeamTableRow {
  const debate = p.dynamics === 'debate';
  return {
    run_id: p.run ?? `r${seq++}`,
    config_id: 'c',
    geometry: 'chain',
    k: 1,
    temperature: 0.7,
    protocol: p.arm === 'none' ? 'glauber' : p.arm,
    population_arm: p.population_arm ?? null,
    answer_event: 0,
    answer: 'x',
    tag: null,
    focus: p.focus ?? null,
    drifting: p.drifting ?? false,
    drift_onset: p.drift_onset ?? null,
    recovered: p.recovered ?? null,
    judge_verdict: p.judge_verdict ?? null,
    regenerated: false,
    feedback: false,
    calls: debate ? 5 : p.n,
    prompt_tokens: debate ? 100 : 50 * p.n,
    completion_tokens: debate ? 10 : 5 * p.n,
    ...p,
  } as TeamTableRow;
}

const relay = (
  n: number,
  trial: number,
  prompt_id: string,
  fact_recall: number,
  exact_match: number,
  population_arm: string | null = null,
) => row({ dynamics: 'relay', arm: 'none', n, trial, prompt_id, turn: 1, fact_recall, exact_match, population_arm });

function debate(run: string, arm: string, trial: number, scores: number[], extra: Omit<Partial<RowInput>, 'turn'>[]): TeamTableRow[] {
  return scores.map((s, i) =>
    row({ run, dynamics: 'debate', arm, n: 3, trial, prompt_id: 'mp1', turn: i + 1, fact_recall: s, exact_match: s, ...extra[i] }),
  );
}

const ROWS: TeamTableRow[] = [
  // N = 1: trial 0 (A 1/1, B .5/0) -> fr .75, em .5; trial 1 (A .5/0, B .5/0) -> fr .5, em 0.
  //   fr mean .625, sd .1768, SE .125 -> [.5, .75]; em mean .25, SE .25 -> [0, .5].
  relay(1, 0, 'A', 1, 1),
  relay(1, 0, 'B', 0.5, 0),
  relay(1, 1, 'A', 0.5, 0),
  relay(1, 1, 'B', 0.5, 0),
  // N = 2: trial 0 -> 1, 1; trial 1 (A 1/1, B .5/0) -> .75, .5: fr .875 [.75, 1]; em .75 [.5, 1].
  relay(2, 0, 'A', 1, 1),
  relay(2, 0, 'B', 1, 1),
  relay(2, 1, 'A', 1, 1),
  relay(2, 1, 'B', 0.5, 0),
  // N = 3, one trial, belief arms: homo 1, 1 -> 1; none 1, 0 -> .5; probe 0, 0 -> 0 (no SE).
  relay(3, 0, 'A', 1, 1, 'homo'),
  relay(3, 0, 'B', 1, 1, 'homo'),
  relay(3, 0, 'A', 1, 1),
  relay(3, 0, 'B', 0, 0),
  relay(3, 0, 'A', 0, 0, 'probe'),
  relay(3, 0, 'B', 0, 0, 'probe'),
  // Arm none, d1 (trial 0): 1, 0, 0 -> FOCUS -1, 0; turns 2-3 drift (onset 2), no recovery; judge: drift (TP), no drift (FN).
  ...debate(
    'd1',
    'none',
    0,
    [1, 0, 0],
    [
      {},
      { focus: -1, drifting: true, drift_onset: 2, recovered: false, judge_verdict: 'drift' },
      { focus: 0, drifting: true, drift_onset: 2, recovered: false, judge_verdict: 'no_drift' },
    ],
  ),
  // d2 (trial 1): 0, 1, 1 -> FOCUS +1, 0; no drift; judge: no drift (TN), failure on a steady turn (FP).
  ...debate('d2', 'none', 1, [0, 1, 1], [{}, { focus: 1, judge_verdict: 'no_drift' }, { focus: 0, judge_verdict: 'failure' }]),
  // Arm drift-policy, d3 (trial 0): 1, 1, 1; judge: no drift twice (TN, TN).
  ...debate('d3', 'drift-policy', 0, [1, 1, 1], [{}, { focus: 0, judge_verdict: 'no_drift' }, { focus: 0, judge_verdict: 'no_drift' }]),
];
// Fix the drift fields of the debates' other turns (the run's onset and recovery are on every turn).
for (const r of ROWS) if (r.run_id === 'd1') Object.assign(r, { drift_onset: 2, recovered: false });

let result: ReportResult;
let html: string;

beforeAll(async () => {
  const dir = tempDir();
  const out = join(dir, 'corpus');
  const spec = `name: teams\ndataset: ${RHEON6}\nprompts: [fq367]\ngeometries: [ring]\nsizes: [4]\ntemperatures: [0.7]\ntrials: 1\nsweeps: 1\nseed: 3\n`;
  expect((await runSweep(writeSpec(dir, spec), { out, concurrency: 4, logLevel: 'silent' })).status).toBe('complete');
  await writeParquetTable(teamsTablePath(out), TEAMS_TABLE, ROWS);
  result = await writeReport(out);
  html = readFileSync(result.index, 'utf8');
}, 120_000);

const table = (id: string) => {
  const t = result.tables.find((x) => x.id === id);
  expect(t, id).toBeDefined();
  const [head, ...body] = readFileSync(t!.csv, 'utf8').trim().split('\n');
  return { head: head.split(','), body: body.map((l) => l.split(',')) };
};
const specValues = (id: string) => {
  const f = result.figures.find((x) => x.id === id);
  expect(f, id).toBeDefined();
  return (JSON.parse(readFileSync(f!.spec, 'utf8')) as { data: { values: Record<string, unknown>[] } }).data.values;
};

describe('the report on team runs (teams.parquet)', () => {
  it('writes the population figures and tables, then the team ones, each named once by the catalog', () => {
    const written = { figures: result.figures.map((f) => f.id), tables: result.tables.map((t) => t.id) };
    expect(written.figures.filter((id) => id.startsWith('team-'))).toHaveLength(4);
    expect(written.tables.filter((id) => id.startsWith('team-'))).toHaveLength(5);
    expectCatalogued(written, result.data.encoders);
  });

  it('lost in propagation: fact recall and exact match per N, means and SE over trials as computed by hand', () => {
    const v = specValues('team-lost-in-propagation').filter((p) => p.population === 'none');
    const at = (n: number, metric: string) => v.find((p) => p.n === n && p.metric === metric)!;
    expect(at(1, 'fact recall').value).toBeCloseTo(0.625, 12);
    expect([at(1, 'fact recall').se_lo, at(1, 'fact recall').se_hi]).toEqual([0.5, 0.75]);
    expect(at(1, 'exact match').value).toBeCloseTo(0.25, 12);
    expect(at(1, 'exact match').se_lo).toBeCloseTo(0, 12);
    expect(at(1, 'exact match').se_hi).toBeCloseTo(0.5, 12);
    expect(at(2, 'fact recall').value).toBeCloseTo(0.875, 12);
    expect(at(2, 'exact match').value).toBeCloseTo(0.75, 12);
    expect(at(2, 'exact match').se_lo).toBeCloseTo(0.5, 12);
    // One trial: no band, said in the caption's count.
    expect(at(3, 'exact match')).toMatchObject({ value: 0.5, se_lo: null, se_hi: null, trials: 1 });
    expect(result.figures.find((f) => f.id === 'team-lost-in-propagation')).toBeDefined();
    expect(html).toMatch(/single trial and no band/);
  });

  it('belief injection: one bar per population (homo 1, none .5, probe 0 at N = 3)', () => {
    const v = specValues('team-belief-injection').filter((p) => p.n === 3);
    expect(Object.fromEntries(v.map((p) => [p.population, p.value]))).toEqual({ homo: 1, none: 0.5, probe: 0 });
  });

  it('FOCUS per turn per arm: the voted solution and FOCUS with SE over trials', () => {
    const v = specValues('team-focus').filter((p) => p.arm === 'none');
    const at = (panel: string, turn: number) => v.find((p) => p.panel === panel && p.turn === turn)!;
    // Turn 1: scores 1 (trial 0) and 0 (trial 1): mean .5, SE .5. Turn 2 FOCUS: -1 and +1: mean 0, SE 1.
    expect(at('score of the voted solution', 1)).toMatchObject({ value: 0.5, se_lo: 0, se_hi: 1 });
    expect(at('FOCUS', 2)).toMatchObject({ value: 0, se_lo: -1, se_hi: 1 });
    expect(v.some((p) => p.panel === 'FOCUS' && p.turn === 1)).toBe(false);
  });

  it('drift prevalence and recovery per arm; recovery undefined where nothing drifted', () => {
    const { head, body } = table('team-drift-by-arm');
    expect(head[0]).toBe('arm');
    // none: 2 debates, 1 drifts (.5), 0 recover (0), onset 2, final score (0 + 1)/2, 15 calls and 330 tokens per debate.
    expect(body[0]).toEqual(['none', '2', '1', '0.5', '0', '0', '2', '0.5', '15', '330']);
    // drift-policy: recovery and onset undefined (empty in CSV).
    expect(body[1]).toEqual(['drift-policy', '1', '0', '0', '0', '', '', '1', '15', '330']);
    const bars = specValues('team-drift');
    expect(bars.find((b) => b.arm === 'drift-policy' && b.measure === 'recovered (of drifting)')).toBeUndefined();
    expect(result.figures.length).toBeGreaterThan(0);
  });

  it('DRIFTJudge confusion table: failures are wrong verdicts; undefined rates in words, never NaN', () => {
    const { body } = table('team-driftjudge');
    expect(body[0]).toEqual(['none', '4', '1', '1', '1', '1', '1', '0.5', '0.5', '0.5', '0.5']);
    expect(body[1]).toEqual([
      'drift-policy',
      '2',
      '0',
      '0',
      '2',
      '0',
      '0',
      'undefined (the judge flagged no turn)',
      'undefined (no turn drifted)',
      '1',
      '1',
    ]);
    expect(html).not.toMatch(/NaN/);
  });

  it('calls and tokens per run and arm', () => {
    const { body } = table('team-cost');
    const debateNone = body.find((r) => r[0] === 'debate' && r[1] === 'none')!;
    expect(debateNone).toEqual(['debate', 'none', 'none', '2', '15', '300', '30']);
    // Relay, population none: N = 1 (4 runs, 1 call each), N = 2 (4 runs, 2 calls), N = 3 (2 runs, 3 calls): 18 calls / 10 runs,
    // 50 prompt and 5 completion tokens per call.
    const relayNone = body.find((r) => r[0] === 'relay' && r[2] === 'none')!;
    expect(relayNone.slice(3)).toEqual(['10', '1.8', '90', '9']);
  });
});

const CHROMIUM = '/usr/bin/chromium';
describe.skipIf(!existsSync(CHROMIUM))('the team report in headless Chromium', () => {
  it('shows every team figure and table', async () => {
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
      await page.goto(pathToFileURL(result.index).href);
      for (const id of ['team-lost-in-propagation', 'team-belief-injection', 'team-focus', 'team-drift']) {
        const box = await page.locator(`section#${id} figure svg`).boundingBox();
        expect(box?.width, id).toBeGreaterThan(200);
      }
      for (const id of ['team-answers', 'team-drift-by-arm', 'team-driftjudge', 'team-cost'])
        expect(await page.locator(`section#${id} table tbody tr`).count(), id).toBeGreaterThan(0);
    } finally {
      await browser.close();
    }
  });
});
