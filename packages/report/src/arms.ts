import type { CorpusData, RunInfo } from './corpus-data.js';

/**
 * Arms: the gridded settings that change what a run is (protocol, dynamics, template, population). Their
 * numbers are never pooled: every pooled analysis groups by each arm column the sweep grids.
 */
const ARM_COLUMNS = [
  { key: 'protocol', title: 'protocol', value: (r: RunInfo) => r.protocol },
  { key: 'dynamics', title: 'dynamics', value: (r: RunInfo) => r.dynamics ?? 'asynchronous' },
  { key: 'template', title: 'template', value: (r: RunInfo) => r.template_arm ?? '' },
  { key: 'population', title: 'population', value: (r: RunInfo) => r.population_arm ?? '' },
] as const;

export type ArmColumn = (typeof ARM_COLUMNS)[number];

/** The arm columns that take more than one value in this corpus, in a fixed order. */
export function armColumns(data: CorpusData): ArmColumn[] {
  return ARM_COLUMNS.filter((c) => new Set(data.runs.map(c.value)).size > 1);
}

/** A run's arm, as one label (`glauber · synchronous`); '' when the sweep grids no arm. */
export function armOf(run: RunInfo, columns: readonly ArmColumn[]): string {
  return columns.map((c) => c.value(run)).join(' · ');
}

/** The arms present, in the order their first run appears (the plan's order). */
export function armsPresent(runs: readonly RunInfo[], columns: readonly ArmColumn[]): string[] {
  return [...new Set(runs.map((r) => armOf(r, columns)))];
}

/** Prompts left out of the main text's pooled analyses (`--exclude-prompts`, else the spec's `exclude_prompts`). */
export function excluded(data: CorpusData): string[] {
  return data.excludePrompts ?? [];
}

/** The runs a pooled analysis pools: every run whose prompt is not excluded. */
export function pooledRuns(data: CorpusData): RunInfo[] {
  const ex = excluded(data);
  return ex.length === 0 ? data.runs : data.runs.filter((r) => !ex.includes(r.prompt_id));
}

/** The sentence a pooled table or figure's caption ends with. */
export function exclusionNote(data: CorpusData): string {
  const ex = excluded(data);
  const prompts = [...new Set(data.runs.map((r) => r.prompt_id))];
  if (ex.length === 0) return ` Pooled over every prompt (${prompts.length}).`;
  return ` Prompts excluded from this pooled analysis: ${ex.join(', ')} (${data.excludeSource ?? '--exclude-prompts'}); pooled over ${prompts.filter((p) => !ex.includes(p)).join(', ')}.`;
}

/**
 * The sentence of a table the paper pools over every prompt whatever the main text leaves out (Table 7's pooled
 * column, Table 10's configuration-trial pairs): `--exclude-prompts` does not apply to it.
 */
export function everyPromptNote(data: CorpusData, what: string): string {
  const prompts = [...new Set(data.runs.map((r) => r.prompt_id))];
  const ex = excluded(data);
  return (
    ` Scope: ${what} every prompt (${prompts.length}), as the paper's table does` +
    (ex.length > 0 ? `; ${data.excludeSource ?? '--exclude-prompts'} (${ex.join(', ')}) does not apply here.` : '.')
  );
}

/** The sentence saying arms are kept apart, when there are any. */
export function armNote(data: CorpusData): string {
  const cols = armColumns(data);
  return cols.length === 0 ? '' : ` Arms (${cols.map((c) => c.title).join(', ')}) are never pooled: one row or panel each.`;
}
