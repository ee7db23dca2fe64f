import { type JudgeCallsDef, type ProtocolDef, registerJudgeCalls, registerProtocol } from '@panta/core';
import { type AddedTable, registerTable } from '@panta/corpus';
import { registerScenario, type ScenarioModel } from '@panta/llm';

/**
 * A study: an experiment run with the library (its datasets, scenario prompts, metrics, report sections and
 * surrogate scenario), kept apart from it in a folder of its own. The library knows protocols, schedules,
 * tables and scenario models; a study brings its own and registers them into the library's registries
 * (protocols first: a scenario or a table may name them).
 * Its report sections are registered apart (report.ts), where the report is drawn: @panta/report loads the
 * chart renderer, which no other command needs at startup.
 */
export interface Study {
  /** The study's name, and its folder's under packages/studies/src. */
  readonly name: string;
  /** Its surrogate scenario model, registered under the study's name unless `scenarioName` says another. */
  readonly scenario?: ScenarioModel;
  readonly scenarioName?: string;
  /** Whether a surrogate naming no scenario plays it too (one it held before scenarios were named). */
  readonly scenarioImplied?: boolean;
  /** Further scenario models of the study, each under its own name (registered after `scenario`). */
  readonly scenarios?: readonly StudyScenario[];
  /** The protocols it adds (a spec's `protocol` accepts their names), in the schema's order after the built-in ones. */
  readonly protocols?: Readonly<Record<string, ProtocolDef>>;
  /** The tables it adds to a corpus (written at finish, checked by verify, described by publish). */
  readonly tables?: readonly AddedTable[];
  /** The calls its tables ask an LLM judge, as `panta plan` counts them. */
  readonly judgeCalls?: readonly JudgeCallsDef[];
}

/** A scenario model a study registers under a name of its own; `implied` as Study.scenarioImplied. */
export interface StudyScenario {
  readonly name: string;
  readonly model: ScenarioModel;
  readonly implied?: boolean;
}

const registered = new Set<string>();

/** Registers a study's parts into the library's registries, once per process. */
export function registerStudy(study: Study): void {
  if (registered.has(study.name)) return;
  registered.add(study.name);
  for (const [name, def] of Object.entries(study.protocols ?? {})) registerProtocol(name, def);
  if (study.scenario) registerScenario(study.scenarioName ?? study.name, study.scenario, { implied: study.scenarioImplied });
  for (const s of study.scenarios ?? []) registerScenario(s.name, s.model, { implied: s.implied });
  for (const table of study.tables ?? []) registerTable(table);
  for (const calls of study.judgeCalls ?? []) registerJudgeCalls(calls);
}
