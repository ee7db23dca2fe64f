import { describe, expect, it } from 'vitest';
import { teamArmTestTable, teamArmTests } from '../src/teams/report/arm-tests.js';
import type { TeamRow } from '../src/teams/report/data.js';

let seq = 0;
function row(p: Partial<TeamRow> & Pick<TeamRow, 'dynamics' | 'arm' | 'trial'>): TeamRow {
  return {
    run_id: `r${seq++}`,
    config_id: 'c',
    prompt_id: 'A',
    n: 2,
    population: 'none',
    turn: 1,
    exact_match: 0,
    fact_recall: 0,
    focus: null,
    drifting: false,
    drift_onset: null,
    recovered: null,
    judge_verdict: null,
    calls: 1,
    prompt_tokens: 1,
    completion_tokens: 1,
    ...p,
  } as TeamRow;
}

const relay = (arm: string, trial: number, fact_recall: number, prompt_id = 'A') =>
  row({ dynamics: 'relay', arm, trial, fact_recall, exact_match: fact_recall >= 0.5 ? 1 : 0, prompt_id });

function debate(run: string, arm: string, trial: number, scores: number[], onset: number | null): TeamRow[] {
  return scores.map((s, i) => row({ run_id: run, dynamics: 'debate', arm, trial, n: 3, turn: i + 1, fact_recall: s, drift_onset: onset }));
}

const ROWS: TeamRow[] = [
  // Relay, N = 2. none per trial: (.1 + .3)/2 = .2, .4, .6; board: .6, .8, .7, .9.
  relay('none', 0, 0.1, 'A'),
  relay('none', 0, 0.3, 'B'),
  relay('none', 1, 0.4),
  relay('none', 2, 0.6),
  relay('board', 0, 0.6),
  relay('board', 1, 0.8),
  relay('board', 2, 0.7),
  relay('board', 3, 0.9),
  // Relay at N = 4 without the plain team: nothing to test against, left out.
  row({ dynamics: 'relay', arm: 'board', trial: 0, n: 4 }),
  // Debates: none ends 0 (drifted) and 1 (steady); drift-policy ends 1 and 1, never drifts.
  ...debate('d1', 'none', 0, [1, 0, 0], 2),
  ...debate('d2', 'none', 1, [0, 1, 1], null),
  ...debate('d3', 'drift-policy', 0, [1, 1, 1], null),
  ...debate('d4', 'drift-policy', 1, [0, 1, 1], null),
  // regenerate: a single trial, so no variance to test against.
  ...debate('d5', 'regenerate', 0, [1, 1, 1], null),
];

describe('team arm tests: every arm against the plain team, Welch t and Cohen d over trials', () => {
  const tests = teamArmTests(ROWS);
  const at = (dynamics: string, arm: string, metric: string) =>
    tests.find((t) => t.dynamics === dynamics && t.arm === arm && t.metric === metric)!;

  it('relay fact recall, computed by hand (scipy ttest_ind equal_var=False: t 2.6458, df 3.2347, p 0.07139)', () => {
    const t = at('relay', 'board', 'fact recall');
    expect(t).toMatchObject({ n: 2, baseline: 'none', trials_arm: 4, trials_baseline: 3, note: null });
    expect(t.mean_arm).toBeCloseTo(0.75, 12);
    expect(t.mean_baseline).toBeCloseTo(0.4, 12);
    // var board = .05/3, var none = .08/2; t = .35 / sqrt(.05/12 + .04/3) = .35 / sqrt(.0175).
    expect(t.welch_t).toBeCloseTo(0.35 / Math.sqrt(0.0175), 9);
    expect(t.welch_df).toBeCloseTo(3.234718826405868, 9);
    expect(t.p_two_tailed).toBeCloseTo(0.07139443829236913, 6);
    // pooled SD sqrt((3 * .05/3 + 2 * .04) / 5) = sqrt(.026).
    expect(t.cohen_d).toBeCloseTo(0.35 / Math.sqrt(0.026), 9);
    expect(tests.some((x) => x.n === 4)).toBe(false);
  });

  it("debates: the final turn's score and drift per debate; t = ±1 on df 1 gives p = 1/2 exactly", () => {
    // final score: drift-policy 1, 1 against none 0, 1: diff .5, se sqrt(0 + .5/2) = .5, t 1, df 1, d .5 / sqrt(.5/2) = 1.
    expect(at('debate', 'drift-policy', 'final score')).toMatchObject({
      mean_arm: 1,
      mean_baseline: 0.5,
      welch_t: 1,
      welch_df: 1,
      cohen_d: 1,
    });
    expect(at('debate', 'drift-policy', 'final score').p_two_tailed).toBeCloseTo(0.5, 9);
    expect(at('debate', 'drift-policy', 'drifted')).toMatchObject({ mean_arm: 0, mean_baseline: 0.5, welch_t: -1, cohen_d: -1 });
    const single = at('debate', 'regenerate', 'final score');
    expect(single).toMatchObject({ welch_t: null, p_two_tailed: null, cohen_d: null, trials_arm: 1 });
    expect(single.note).toMatch(/fewer than two trials/);
  });

  it('as a report table: one row per test, undefined values empty with the reason in the note', () => {
    const table = teamArmTestTable(ROWS)!;
    expect(table.id).toBe('team-arm-tests');
    expect(table.rows).toHaveLength(tests.length);
    expect(table.caption).toMatch(/arm none \(the plain team\)/);
    expect(teamArmTestTable(ROWS.filter((r) => r.arm === 'none'))).toBeNull();
  });
});
