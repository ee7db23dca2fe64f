import type { TopLevelSpec } from 'vega-lite';
import { queryRows, readParquetSql, shardPath } from '@panta/corpus';
import { protocolOrder } from './aggregate.js';
import type { CorpusData, RelayRun, RunInfo } from './corpus-data.js';
import { CONFIG, LINE_LEGEND, PANEL, SCHEMA } from './figure-style.js';
import type { Figure } from './figure.js';
import { extent, mean, seBand } from './stats.js';
import type { Cell, Table } from './table.js';

/**
 * "Lost in propagation": on a `chain` (agent i reads agent i − 1) an answer moves one hop per update, so at a
 * fixed token budget a longer chain gets fewer sweeps. This file measures accuracy at the sweep's budget.
 */

/** Team schedules (relay, hub, debate) have tables of their own (the teams study's section): not population chains. */
const TEAM_DYNAMICS = new Set(['relay', 'hub', 'debate']);

/** A run of a team schedule (relay, hub, debate). */
export function isTeamRun(r: Pick<RunInfo, 'dynamics'>): boolean {
  return TEAM_DYNAMICS.has(r.dynamics ?? '');
}

/** A population's chain run (a team relay on a chain has its own budget, team.token_budget, and tables). */
function populationChain(r: RunInfo): boolean {
  return r.geometry === 'chain' && !isTeamRun(r);
}

/** Population chain runs have two sizes or more: the only case where accuracy against chain length means anything. */
export function relayApplies(runs: readonly RunInfo[]): boolean {
  return new Set(runs.filter(populationChain).map((r) => r.n)).size >= 2;
}

/**
 * One pass of DuckDB over the chain shards: tokens of every role summed per event and accumulated in event order
 * (extra calls carry their event's index: an ssvp merge or drift-policy's judge and moderator precede the answer,
 * so they count before it); B is the smallest run total; each run is cut at its last event with cumulative
 * tokens <= B, and each agent's latest answer at or before the cut (carried forward from earlier sweeps) is the
 * snapshot. Only one row per run comes back.
 */
export function relaySql(files: readonly string[]): string {
  return `WITH rows AS (
      SELECT run_id, prompt_id, event, role, sweep, agent, tag, coalesce(prompt_tokens, 0) + coalesce(completion_tokens, 0) AS tokens
      FROM ${readParquetSql(files)}
    ),
    spent AS (
      SELECT run_id, prompt_id, event, sum(sum(tokens)) OVER (PARTITION BY run_id ORDER BY event ROWS UNBOUNDED PRECEDING) AS cum
      FROM rows GROUP BY run_id, prompt_id, event
    ),
    budget AS (SELECT prompt_id, min(total) AS b FROM (SELECT run_id, prompt_id, max(cum) AS total FROM spent GROUP BY run_id, prompt_id) GROUP BY prompt_id),
    cut AS (
      SELECT s.run_id, any_value(prompt_id) AS prompt_id, any_value(b) AS b, max(event) AS cut_event, max(cum) AS used FROM spent s JOIN budget USING (prompt_id) WHERE cum <= b GROUP BY s.run_id
    ),
    snapshot AS (
      SELECT r.run_id, r.agent, r.sweep, r.tag FROM rows r JOIN cut c ON r.run_id = c.run_id AND r.event <= c.cut_event
      WHERE r.role = 'agent'
      QUALIFY row_number() OVER (PARTITION BY r.run_id, r.agent ORDER BY r.event DESC) = 1
    )
    SELECT c.run_id, any_value(c.prompt_id) AS prompt_id, any_value(c.b) AS budget, any_value(c.cut_event) AS cut_event, any_value(c.used) AS tokens_used, max(s.sweep) AS sweep,
      count(s.agent) AS agents, count(*) FILTER (WHERE s.tag = 'correct') AS correct, count(*) FILTER (WHERE s.tag = 'hallucinated') AS hallucinated
    FROM cut c LEFT JOIN snapshot s ON s.run_id = c.run_id
    GROUP BY c.run_id ORDER BY c.run_id`;
}

/** Every chain run of `runs` at the budget (complete runs only: their shards are final). */
export async function loadRelay(dir: string, runs: readonly RunInfo[]): Promise<RelayRun[]> {
  const chain = runs.filter(populationChain);
  const result = await queryRows(relaySql(chain.map((r) => shardPath(dir, r.run_id))));
  const rows = new Map(result.map((r) => [String(r.run_id), r]));
  // The run that sets a prompt's B fits it whole, so every prompt has a row to read its B from.
  const budgets = new Map(result.map((r) => [String(r.prompt_id), Number(r.budget)]));
  const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));
  return chain.map((r) => {
    const row = rows.get(r.run_id);
    const correct = Number(row?.correct ?? 0);
    const hallucinated = Number(row?.hallucinated ?? 0);
    return {
      run_id: r.run_id,
      budget: Number(row?.budget ?? budgets.get(r.prompt_id)),
      cut_event: num(row?.cut_event),
      tokens_used: num(row?.tokens_used),
      sweep: num(row?.sweep),
      agents: Number(row?.agents ?? 0),
      correct,
      hallucinated,
      accuracy: correct + hallucinated > 0 ? correct / (correct + hallucinated) : null,
    };
  });
}

/** Accuracy at the budget of one (prompt, protocol, T, N), over its trials. */
export interface RelayPoint {
  prompt_id: string;
  protocol: string;
  temperature: number;
  n: number;
  runs: number;
  budget: number;
  tokens_used: number | null;
  sweep: number | null;
  agents: number | null;
  accuracy: number | null;
  lo: number | null;
  hi: number | null;
  /** mean ± one standard error over trials (the figure's band); null with one trial. */
  se_lo: number | null;
  se_hi: number | null;
}

export function relayPoints(data: CorpusData): RelayPoint[] {
  const byId = new Map(data.runs.map((r) => [r.run_id, r]));
  const groups = new Map<string, { run: RunInfo; rows: RelayRun[] }>();
  for (const x of data.events?.relay ?? []) {
    const run = byId.get(x.run_id)!;
    const key = `${run.prompt_id}\u0000${run.protocol}\u0000${run.temperature}\u0000${run.n}`;
    const g = groups.get(key) ?? { run, rows: [] };
    g.rows.push(x);
    groups.set(key, g);
  }
  const order = protocolOrder(data);
  return [...groups.values()]
    .map(({ run, rows }) => {
      const acc = rows.map((r) => r.accuracy);
      const [lo, hi] = extent(acc);
      const band = seBand(acc);
      return {
        prompt_id: run.prompt_id,
        protocol: run.protocol,
        temperature: run.temperature,
        n: run.n,
        runs: rows.length,
        budget: rows[0].budget,
        tokens_used: mean(rows.map((r) => r.tokens_used)),
        sweep: mean(rows.map((r) => r.sweep)),
        agents: mean(rows.map((r) => r.agents)),
        accuracy: mean(acc),
        lo,
        hi,
        se_lo: band.lo,
        se_hi: band.hi,
      };
    })
    .sort(
      (a, b) =>
        a.prompt_id.localeCompare(b.prompt_id) ||
        order.indexOf(a.protocol) - order.indexOf(b.protocol) ||
        a.temperature - b.temperature ||
        a.n - b.n,
    );
}

const DEFINITION =
  "The budget B is the smallest total token count (prompt + completion, every role: answers and the protocols' extra calls) of any chain run of the same prompt (prompts differ in length). " +
  "Each chain run is cut at the last event whose cumulative tokens, in event order, are ≤ B; the snapshot there holds each agent's latest answer " +
  '(carried forward from earlier sweeps; agents that have not answered yet are left out), and accuracy = #correct / (#correct + #hallucinated) over it ' +
  '(n/a when it has neither).';

/** The numbers of the figure, one row per (prompt, protocol, T, N); null when the sweep has no chain of two sizes. */
export function relayTable(data: CorpusData): Table | null {
  if (!data.events?.relay) return null;
  const points = relayPoints(data);
  return {
    // not the figure's id: both are sections of index.html
    id: 'lost-in-propagation-accuracy',
    title: 'Lost in propagation: accuracy at a fixed token budget',
    caption:
      `${DEFINITION} Per prompt, protocol, temperature and chain length N over trials: the budget, the mean tokens spent up to the cut, ` +
      'the mean sweep and number of agents of the snapshot, and the mean, minimum and maximum accuracy.',
    columns: [
      'prompt',
      'protocol',
      'T',
      'N',
      'runs',
      'budget B (tokens)',
      'tokens used (mean)',
      'sweep reached (mean)',
      'agents answered (mean)',
      'accuracy (mean)',
      'accuracy (min)',
      'accuracy (max)',
    ],
    rows: points.map((p): Cell[] => [
      p.prompt_id,
      p.protocol,
      String(p.temperature),
      p.n,
      p.runs,
      p.budget,
      p.tokens_used,
      p.sweep,
      p.agents,
      p.accuracy,
      p.lo,
      p.hi,
    ]),
    empty: 'No chain run is complete yet.',
  };
}

/** Accuracy at the budget against chain length, one line per protocol, one column per prompt (and a row per T when several). */
export function relayFigure(data: CorpusData): Figure | null {
  if (!data.events?.relay) return null;
  const points = relayPoints(data);
  if (points.length === 0) return null;
  const sizes = [...new Set(points.map((p) => p.n))].sort((a, b) => a - b);
  const prompts = [...new Set(points.map((p) => p.prompt_id))];
  const temperatures = [...new Set(points.map((p) => p.temperature))].sort((a, b) => a - b);
  const protocols = protocolOrder(data).filter((p) => points.some((x) => x.protocol === p));
  const x = {
    field: 'n',
    type: 'quantitative',
    title: 'chain length N',
    scale: { type: 'log', base: 2, domain: [sizes[0] / 1.25, sizes.at(-1)! * 1.25], nice: false },
    axis: { values: sizes, format: 'd', grid: true },
  };
  const color = {
    field: 'protocol',
    type: 'nominal',
    title: 'protocol',
    scale: { domain: protocols, scheme: 'tableau10' },
    legend: LINE_LEGEND,
  };
  const y = { field: 'accuracy', type: 'quantitative', title: 'accuracy at budget B', scale: { domain: [0, 1] } };
  const facet: Record<string, unknown> = { column: { field: 'prompt_id', type: 'nominal', sort: prompts, title: null } };
  if (temperatures.length > 1) facet.row = { field: 'temperature', type: 'ordinal', sort: temperatures, title: 'T' };
  const budgets = prompts.map((p) => `${points.find((x) => x.prompt_id === p)!.budget.toLocaleString('en-US')} tokens for ${p}`).join(', ');
  const spec = {
    $schema: SCHEMA,
    title: 'lost in propagation: accuracy at a fixed token budget',
    config: CONFIG,
    data: { values: points },
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
            y,
            color,
            tooltip: [
              { field: 'protocol' },
              { field: 'n', title: 'N' },
              { field: 'accuracy', format: '.3f' },
              { field: 'lo', format: '.3f', title: 'min' },
              { field: 'hi', format: '.3f', title: 'max' },
              { field: 'se_lo', format: '.3f', title: 'mean − SE' },
              { field: 'se_hi', format: '.3f', title: 'mean + SE' },
              { field: 'sweep', format: '.1f', title: 'sweep reached' },
              { field: 'runs' },
            ],
          },
        },
      ],
    },
    resolve: { scale: { y: 'shared' } },
  } as unknown as TopLevelSpec;
  return {
    id: 'lost-in-propagation',
    title: 'Lost in propagation: accuracy against chain length at a fixed token budget',
    caption:
      `${DEFINITION} Here B = ${budgets}. Accuracy against chain length N (log scale; on a chain agent i reads agent i − 1), ` +
      `one line per protocol, one column per prompt${temperatures.length > 1 ? ', one row per temperature' : ''}: the mean over trials, the band ± one standard error over trials (sd/√n; none with a single trial). ` +
      'A longer chain spends B on more agents and so reaches fewer sweeps (the table "Lost in propagation: accuracy at a fixed token budget" gives the sweep reached).',
    spec,
  };
}
