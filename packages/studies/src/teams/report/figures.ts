import { CONFIG, type Figure, LINE_LEGEND, PANEL, SCHEMA } from '@panta/report';
import { armOrder, debateRows, driftSummaries, focusPoints, propagationPoints, type PropagationPoint } from './aggregate.js';
import type { TeamRow } from './data.js';

/** Says what the bands are, and when there are none because every group has a single trial. */
export function teamBandNote(points: readonly { trials: number }[]): string {
  const base =
    'means over trials (each trial first averaged over the prompts), the band or bar ± one standard error over trials (sd/√n, sample sd)';
  if (points.length > 0 && points.every((p) => p.trials < 2))
    return `${base}; every point has a single trial, so there is no standard error and no band.`;
  const single = points.filter((p) => p.trials < 2).length;
  return single === 0 ? `${base}.` : `${base}; ${single} point${single === 1 ? ' has' : 's have'} a single trial and no band.`;
}

const SCORE_NOTE =
  'Scores are against gold: with gold facts, fact recall is the share of facts in the answer and exact match needs them all (FanOutQA); ' +
  'otherwise both are 1 when the answer names the gold answer (the one gold option) and no other; not known and judge failures count as wrong.';

/** Lost in propagation (paper 001): fact recall and exact match of the team's answer against team size N. */
export function propagationFigure(rows: readonly TeamRow[]): Figure | null {
  const points = propagationPoints(rows);
  if (points.length === 0) return null;
  const sizes = [...new Set(points.map((p) => p.n))].sort((a, b) => a - b);
  const dynamics = [...new Set(points.map((p) => p.dynamics))];
  const groups = [...new Set(points.map(label))];
  const values = points.map((p) => ({ ...p, group: label(p) }));
  const x = {
    field: 'n',
    type: 'quantitative',
    title: 'team size N',
    scale: { domain: [sizes[0], sizes.at(-1)!] },
    axis: { values: sizes, format: 'd' },
  };
  const color = {
    field: 'metric',
    type: 'nominal',
    title: 'metric',
    scale: { domain: ['fact recall', 'exact match'] },
    legend: LINE_LEGEND,
  };
  const facet: Record<string, unknown> = { column: { field: 'dynamics', type: 'nominal', sort: dynamics, title: null } };
  if (groups.length > 1) facet.row = { field: 'group', type: 'nominal', sort: groups, title: null };
  const spec = {
    $schema: SCHEMA,
    title: 'lost in propagation: the answer against team size',
    config: CONFIG,
    data: { values },
    facet,
    spec: {
      width: Math.max(PANEL.width, 220),
      height: 160,
      layer: [
        {
          mark: { type: 'area', opacity: 0.15 },
          encoding: { x, y: { field: 'se_lo', type: 'quantitative', scale: { domain: [0, 1] } }, y2: { field: 'se_hi' }, color },
        },
        {
          mark: { type: 'line', strokeWidth: 1.8, point: { filled: true, size: 28 } },
          encoding: {
            x,
            y: { field: 'value', type: 'quantitative', title: 'score', scale: { domain: [0, 1] } },
            color,
            tooltip: [
              { field: 'metric' },
              { field: 'n', title: 'N' },
              { field: 'value', format: '.3f' },
              { field: 'trials' },
              { field: 'runs' },
            ],
          },
        },
      ],
    },
  } as unknown as Figure['spec'];
  return {
    id: 'team-lost-in-propagation',
    title: 'Lost in propagation: fact recall and exact match against team size',
    caption:
      `Relay (agent i reads only agent i − 1's hand-off note; the last agent answers) and hub (N workers, one aggregation) at the sweep's token budget: ` +
      `${teamBandNote(points)} ${SCORE_NOTE}` +
      (groups.length > 1 ? ' One row of panels per arm and population.' : ''),
    spec,
  };
}

function label(p: PropagationPoint): string {
  return `arm ${p.arm}, population ${p.population}`;
}

/** Belief injection (paper 001): exact match per population arm (probe / homo / none), one panel per team and N. */
export function beliefFigure(rows: readonly TeamRow[]): Figure | null {
  const points = propagationPoints(rows).filter((p) => p.metric === 'exact match');
  const populations = [...new Set(points.map((p) => p.population))];
  if (populations.length < 2) return null;
  const order = ['homo', 'none', 'probe'].filter((p) => populations.includes(p));
  const sort = [...order, ...populations.filter((p) => !order.includes(p)).sort()];
  const values = points.map((p) => ({ ...p, panel: `${p.dynamics}, N = ${p.n}${p.arm === 'none' ? '' : `, ${p.arm}`}` }));
  const panels = [...new Set(values.map((v) => v.panel))];
  const x = { field: 'population', type: 'nominal', title: 'hidden beliefs', sort };
  const spec = {
    $schema: SCHEMA,
    title: 'belief injection: accuracy per population',
    config: CONFIG,
    data: { values },
    facet: { column: { field: 'panel', type: 'nominal', sort: panels, title: null } },
    spec: {
      width: Math.max(PANEL.width, 40 * sort.length),
      height: 160,
      layer: [
        {
          mark: { type: 'bar', opacity: 0.8 },
          encoding: {
            x,
            y: { field: 'value', type: 'quantitative', title: 'exact match', scale: { domain: [0, 1] } },
            color: { field: 'population', type: 'nominal', sort, legend: null },
            tooltip: [
              { field: 'population' },
              { field: 'value', format: '.3f', title: 'exact match' },
              { field: 'trials' },
              { field: 'runs' },
            ],
          },
        },
        { mark: { type: 'rule', strokeWidth: 1.5 }, encoding: { x, y: { field: 'se_lo', type: 'quantitative' }, y2: { field: 'se_hi' } } },
      ],
    },
  } as unknown as Figure['spec'];
  return {
    id: 'team-belief-injection',
    title: 'Belief injection: exact match with probe, homo and no hidden beliefs',
    caption:
      "Hidden beliefs in each member's system prompt, unseen by the others: probe (each member different beliefs), homo (the same for all), none. " +
      `Bars: ${teamBandNote(points)} ${SCORE_NOTE}`,
    spec,
  };
}

/** FOCUS per turn (paper 003): the voted solution's score and FOCUS(t) = score(t) − score(t − 1), one line per arm. */
export function focusFigure(rows: readonly TeamRow[]): Figure | null {
  const points = focusPoints(rows);
  if (points.length === 0) return null;
  const arms = armOrder(points.map((p) => p.arm));
  const turns = [...new Set(points.map((p) => p.turn))].sort((a, b) => a - b);
  const values = points.flatMap((p) => [
    {
      arm: p.arm,
      turn: p.turn,
      panel: 'score of the voted solution',
      value: p.score,
      se_lo: p.score_se_lo,
      se_hi: p.score_se_hi,
      trials: p.trials,
    },
    ...(p.focus === null
      ? []
      : [{ arm: p.arm, turn: p.turn, panel: 'FOCUS', value: p.focus, se_lo: p.focus_se_lo, se_hi: p.focus_se_hi, trials: p.trials }]),
  ]);
  const x = { field: 'turn', type: 'quantitative', title: 'turn', axis: { values: turns, format: 'd' } };
  const color = { field: 'arm', type: 'nominal', title: 'arm', scale: { domain: arms, scheme: 'tableau10' }, legend: LINE_LEGEND };
  const spec = {
    $schema: SCHEMA,
    title: 'problem drift: FOCUS per turn',
    config: CONFIG,
    data: { values },
    facet: { column: { field: 'panel', type: 'nominal', sort: ['score of the voted solution', 'FOCUS'], title: null } },
    spec: {
      width: Math.max(PANEL.width, 240),
      height: 160,
      layer: [
        {
          mark: { type: 'area', opacity: 0.15 },
          encoding: { x, y: { field: 'se_lo', type: 'quantitative' }, y2: { field: 'se_hi' }, color },
        },
        {
          mark: { type: 'line', strokeWidth: 1.8, point: { filled: true, size: 28 } },
          encoding: {
            x,
            y: { field: 'value', type: 'quantitative', title: null },
            color,
            tooltip: [{ field: 'arm' }, { field: 'turn' }, { field: 'value', format: '.3f' }, { field: 'trials' }],
          },
        },
      ],
    },
    resolve: { scale: { y: 'independent' } },
  } as unknown as Figure['spec'];
  return {
    id: 'team-focus',
    title: 'Problem drift: the voted solution and FOCUS per turn',
    caption:
      "Debates (MALLM, end-of-turn voting): left, the score of each turn's voted solution against gold; right, FOCUS(t) = score(t) − score(t − 1) " +
      `("Stay Focused", section 3; negative: the turn made the solution worse). ${teamBandNote(points)} ${SCORE_NOTE}`,
    spec,
  };
}

/** Drift prevalence and recovery per arm (paper 003, RQ2, RQ3, RQ6). */
export function driftFigure(rows: readonly TeamRow[]): Figure | null {
  if (debateRows(rows).length === 0) return null;
  const summaries = driftSummaries(rows);
  const arms = summaries.map((s) => s.arm);
  const values = summaries.flatMap((s) => [
    { arm: s.arm, measure: 'drifting debates', value: s.prevalence, count: `${s.drifting} of ${s.debates}` },
    { arm: s.arm, measure: 'recovered (of drifting)', value: s.recovery, count: `${s.recovered} of ${s.drifting}` },
  ]);
  const spec = {
    $schema: SCHEMA,
    title: 'problem drift and recovery per arm',
    config: CONFIG,
    data: { values: values.filter((v) => v.value !== null) },
    facet: { column: { field: 'measure', type: 'nominal', sort: ['drifting debates', 'recovered (of drifting)'], title: null } },
    spec: {
      width: Math.max(PANEL.width, 50 * arms.length),
      height: 160,
      mark: { type: 'bar', opacity: 0.85 },
      encoding: {
        x: { field: 'arm', type: 'nominal', sort: arms, title: 'arm' },
        y: { field: 'value', type: 'quantitative', title: 'share', scale: { domain: [0, 1] } },
        color: { field: 'arm', type: 'nominal', scale: { domain: arms, scheme: 'tableau10' }, legend: null },
        tooltip: [{ field: 'arm' }, { field: 'value', format: '.3f', title: 'share' }, { field: 'count' }],
      },
    },
  } as unknown as Figure['spec'];
  const noDrift = summaries.filter((s) => s.recovery === null).map((s) => s.arm);
  return {
    id: 'team-drift',
    title: 'Problem drift: drifting debates and recoveries per arm',
    caption:
      "A debate drifts when its voted solution scores below an earlier turn's best for two or more consecutive turns; it recovers when a later turn is back at or above " +
      'that best ("Stay Focused", section 3). Left: the share of debates that drift; right: the share of drifting debates that recover.' +
      (noDrift.length > 0
        ? ` No debate drifted in arm${noDrift.length === 1 ? '' : 's'} ${noDrift.join(', ')}, so recovery is undefined there and not drawn.`
        : ''),
    spec,
  };
}
