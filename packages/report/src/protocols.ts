import type { TopLevelSpec } from 'vega-lite';
import { finalRows, layout, protocolOrder, type Layout } from './aggregate.js';
import type { CorpusData, RunInfo } from './corpus-data.js';
import { CONFIG, SCHEMA, temperatureColor } from './figure-style.js';
import type { Figure } from './figure.js';
import { extent, mean } from './stats.js';
import type { Cell, Table } from './table.js';

/** The sweep grids the protocol: the only case where protocols are compared. */
export function protocolsGridded(data: CorpusData): boolean {
  return new Set(data.runs.map((r) => r.protocol)).size > 1;
}

const EXTRA_ROLES = ['summary', 'merge', 'judge', 'moderator'] as const;

/** Mean over the configurations of a group of each one's spread over trials (max − min); null when no configuration has two trials. */
function trialSpread(runs: readonly RunInfo[], value: (r: RunInfo) => number | null | undefined): number | null {
  const byConfig = new Map<string, (number | null | undefined)[]>();
  for (const r of runs) byConfig.set(r.config_id, [...(byConfig.get(r.config_id) ?? []), value(r)]);
  const spreads = [...byConfig.values()].map((vs) => {
    const [lo, hi] = extent(vs);
    return vs.filter((v) => v !== null && v !== undefined).length >= 2 && lo !== null && hi !== null ? hi - lo : null;
  });
  return mean(spreads);
}

/** Final m and rho, agent and extra calls by role, tokens per agent call, per geometry and protocol; null unless the protocol is gridded. */
export function protocolsTable(data: CorpusData, lay: Layout = layout(data)): Table | null {
  if (!protocolsGridded(data)) return null;
  const encoder = data.encoders[0];
  const finals = finalRows(data, encoder);
  const usage = new Map<string, Map<string, { calls: number; tokens: number }>>();
  for (const u of data.events?.roles ?? []) {
    const m = usage.get(u.run_id) ?? new Map<string, { calls: number; tokens: number }>();
    m.set(u.role, { calls: u.calls, tokens: u.prompt_tokens + u.completion_tokens });
    usage.set(u.run_id, m);
  }
  const counted = (data.events?.roles ?? null) !== null;
  const rows: Cell[][] = [];
  for (const g of lay.geometries) {
    for (const p of protocolOrder(data)) {
      const runs = data.runs.filter((r) => r.geometry === g && r.protocol === p && finals.has(r.run_id));
      if (runs.length === 0) continue;
      const roleSum = (role: string, what: 'calls' | 'tokens') =>
        runs.reduce((s, r) => s + (usage.get(r.run_id)?.get(role)?.[what] ?? 0), 0);
      const agentCalls = roleSum('agent', 'calls');
      const allTokens = runs.reduce((s, r) => s + [...(usage.get(r.run_id)?.values() ?? [])].reduce((t, u) => t + u.tokens, 0), 0);
      rows.push([
        g,
        p,
        runs.length,
        mean(runs.map((r) => finals.get(r.run_id)!.magnetisation)),
        trialSpread(runs, (r) => finals.get(r.run_id)!.magnetisation),
        mean(runs.map((r) => finals.get(r.run_id)!.rho)),
        trialSpread(runs, (r) => finals.get(r.run_id)!.rho),
        counted ? agentCalls : null,
        ...EXTRA_ROLES.map((role) => (counted ? roleSum(role, 'calls') : null)),
        counted && agentCalls > 0 ? roleSum('agent', 'tokens') / agentCalls : null,
        counted && agentCalls > 0 ? allTokens / agentCalls : null,
      ]);
    }
  }
  return {
    id: 'protocols',
    title: 'Coordination protocols compared',
    caption:
      `per geometry and protocol, over every run (prompts, sizes, temperatures, trials): magnetisation m (encoder ${encoder}) and hallucination density ρ at each run's last sweep, ` +
      'the mean over runs and the trial spread (the maximum minus the minimum over the trials of a configuration, averaged over its configurations); ' +
      "LLM calls counted from the event rows by role: agent answers, and the extra calls of the protocols (the summaries of no-sync, ssvp and full-broadcast, ssvp's merges, drift-policy's judge and moderator); " +
      "tokens (prompt + completion) per agent call, of the answers alone and of every role (what an answer costs with its protocol's overhead).",
    columns: [
      'geometry',
      'protocol',
      'runs',
      `m final (${encoder})`,
      'm trial spread',
      'ρ final',
      'ρ trial spread',
      'agent calls',
      ...EXTRA_ROLES.map((r) => `${r} calls`),
      'tokens / agent call',
      'tokens / agent call, all roles',
    ],
    rows,
    empty: 'No run is complete yet.',
  };
}

/** Final rho against protocol: a point per run (colour T), a tick at the mean; a column per geometry, a row per prompt and size. */
export function protocolsFigure(data: CorpusData, lay: Layout = layout(data)): Figure | null {
  if (!protocolsGridded(data)) return null;
  const finals = finalRows(data, data.encoders[0]);
  const order = protocolOrder(data).filter((p) => data.runs.some((r) => r.protocol === p));
  const runs = data.runs.filter((r) => finals.get(r.run_id)?.rho != null);
  if (runs.length === 0) return null;
  const rowOf = (r: RunInfo) => `${r.prompt_id} · N=${r.n}`;
  const rowLabels = [...new Set([...runs].sort((a, b) => a.prompt_id.localeCompare(b.prompt_id) || a.n - b.n).map(rowOf))];
  // Each run gets its own slot in the protocol's band (temperatures side by side, trials within), so equal values do not hide each other.
  const slotOf = (r: RunInfo) => `T${r.temperature} t${r.trial}`;
  const slots = [...new Set([...runs].sort((a, b) => a.temperature - b.temperature || a.trial - b.trial).map(slotOf))];
  const values: object[] = runs.map((r) => ({
    kind: 'run',
    run_id: r.run_id,
    row: rowOf(r),
    geometry: r.geometry,
    protocol: r.protocol,
    temperature: r.temperature,
    slot: slotOf(r),
    rho: finals.get(r.run_id)!.rho,
  }));
  const cells = new Map<string, { row: string; geometry: string; protocol: string; rhos: number[] }>();
  for (const r of runs) {
    const key = `${rowOf(r)}\u0000${r.geometry}\u0000${r.protocol}`;
    const c = cells.get(key) ?? { row: rowOf(r), geometry: r.geometry, protocol: r.protocol, rhos: [] };
    c.rhos.push(finals.get(r.run_id)!.rho!);
    cells.set(key, c);
  }
  for (const c of cells.values())
    values.push({ kind: 'mean', row: c.row, geometry: c.geometry, protocol: c.protocol, rho: mean(c.rhos), runs: c.rhos.length });
  const x = { field: 'protocol', type: 'nominal', sort: order, title: null, axis: { labelAngle: -35, labelAlign: 'right' } };
  const y = { field: 'rho', type: 'quantitative', title: 'ρ (final)', scale: { domain: [0, 1] } };
  const spec = {
    $schema: SCHEMA,
    title: 'final ρ by coordination protocol',
    config: CONFIG,
    data: { values },
    facet: {
      row: { field: 'row', type: 'nominal', sort: rowLabels, title: null, header: { labelAngle: 0, labelAlign: 'left' } },
      column: { field: 'geometry', type: 'nominal', sort: lay.geometries, title: null },
    },
    spec: {
      width: Math.max(180, 44 * order.length),
      height: 140,
      layer: [
        {
          transform: [{ filter: "datum.kind === 'mean'" }],
          mark: { type: 'tick', color: '#222', thickness: 2, size: 30 },
          encoding: { x, y, tooltip: [{ field: 'protocol' }, { field: 'rho', format: '.3f', title: 'mean ρ' }, { field: 'runs' }] },
        },
        {
          transform: [{ filter: "datum.kind === 'run'" }],
          mark: { type: 'point', filled: true, size: 26, opacity: 0.8 },
          encoding: {
            x,
            xOffset: { field: 'slot', type: 'nominal', sort: slots },
            y,
            color: temperatureColor(lay),
            tooltip: [{ field: 'run_id' }, { field: 'rho', format: '.3f' }],
          },
        },
      ],
    },
    resolve: { scale: { y: 'shared' } },
  } as unknown as TopLevelSpec;
  return {
    id: 'protocols-rho',
    title: 'Final ρ by coordination protocol',
    caption:
      "hallucination density ρ at each run's last sweep against the coordination protocol: one point per run (colour: temperature T; side by side by temperature, then trial), " +
      'the black tick at the mean over the runs of the panel (temperatures and trials); one column per geometry, one row per prompt and size. ' +
      'Extra calls each protocol made are in the table coordination protocols.',
    spec,
  };
}
