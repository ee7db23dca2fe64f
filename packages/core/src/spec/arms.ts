import type { Dynamics, PopulationSpec, SweepSpec } from './schema.js';

/**
 * Gridded arms besides protocol: dynamics, template and population. A spec that gives one of them as a
 * single value has one arm without a name, which leaves config ids (and so run ids and seeds) as they were
 * before the axis existed; a list names every arm in the config id, so that arms never share a run id and
 * the report can split them.
 */

/** A template arm: the reference as the spec wrote it (a file, relative to the spec) and its name, if gridded. */
export interface TemplateArm {
  /** Absent: the shipped default template. */
  ref?: string;
  /** The name in config ids; absent when the spec gives a single template (or none). */
  label?: string;
  /** Where the spec says it: `template` or `template[i]`. */
  field: string;
}

/** A population arm: a file dealt out to agents, or none (a homogeneous arm), and its name, if gridded. */
export interface PopulationArm extends PopulationSpec {
  file?: string;
  label?: string;
  field: string;
}

/** A population arm as written in a list (before defaults). */
export interface PopulationArmInput {
  name?: string;
  file?: string;
}

/**
 * The name of a template arm: the file's name without its directory and extension
 * (`templates/rheon-a2.txt` -> `rheon-a2`), characters a run id cannot hold replaced by `_`.
 */
export function armLabel(ref: string): string {
  const base = ref.split(/[\\/]/).pop() ?? ref;
  const stem = base.includes('.') && !base.startsWith('.') ? base.slice(0, base.lastIndexOf('.')) : base;
  return stem.replace(/[^A-Za-z0-9._-]/g, '_') || '_';
}

/** The name of a population arm: its own, else its file's (as armLabel), else `none`. */
export function populationArmLabel(arm: PopulationArmInput): string {
  return arm.name ?? (arm.file !== undefined ? armLabel(arm.file) : 'none');
}

export function dynamicsArms(spec: Pick<SweepSpec, 'dynamics'>): Dynamics[] {
  return Array.isArray(spec.dynamics) ? spec.dynamics : [spec.dynamics];
}

export function templateArms(spec: Pick<SweepSpec, 'template'>): TemplateArm[] {
  const t = spec.template;
  if (t === undefined) return [{ field: 'template' }];
  if (!Array.isArray(t)) return [{ ref: t, field: 'template' }];
  return t.map((ref, i) => ({ ref, label: armLabel(ref), field: `template[${i}]` }));
}

export function populationArms(spec: Pick<SweepSpec, 'population'>): PopulationArm[] {
  const p = spec.population;
  if (p === undefined) return [{ assign: 'distinct', fraction: 0, field: 'population' }];
  if (!Array.isArray(p)) return [{ file: p.file, assign: p.assign, fraction: p.fraction, field: 'population.file' }];
  return p.map((arm, i) => ({
    ...(arm.file !== undefined ? { file: arm.file } : {}),
    assign: arm.assign,
    fraction: arm.fraction,
    label: populationArmLabel(arm),
    field: `population[${i}].file`,
  }));
}

/** How many runs the arms multiply a configuration of prompt, geometry, size, temperature and protocol by. */
export function armCount(spec: Pick<SweepSpec, 'dynamics' | 'template' | 'population'>): number {
  return dynamicsArms(spec).length * templateArms(spec).length * populationArms(spec).length;
}
