import { isAbsolute, resolve } from 'node:path';
import { planSweep, type ArmFiles, type Edge, type Prompt, type PromptTemplate, type SweepSpec } from '@panta/core';
import type { LoadedSweep } from '@panta/engine';

/**
 * A sweep as the scheduler publishes it: everything its files said, so that workers and the collector need
 * only Redis (the spec, dataset and template stay on the scheduler's machine). Runs are recomputed from
 * it, which is exact: planning is a pure function of the spec.
 */
export interface SweepPayload {
  sweepId: string;
  specFile: string;
  spec: SweepSpec;
  prompts: Prompt[];
  template: PromptTemplate;
  edgeLists: [string, Edge[]][];
  /** What the template and population arms' files hold. */
  armFiles: ArmFiles;
  /** The output folder as the scheduler was told (relative paths resolve in the collector's folder). */
  out: string;
  fingerprint: string;
  /** Collector processes the runs are split over (`panta scheduler --collectors K`); absent: one. */
  collectors?: number;
  /**
   * Adaptive temperatures: each configuration group's grid in the scheduler's current round (a group absent,
   * or no grids at all, has the start grid), and that round (0: the start grid). The scheduler publishes them
   * before it opens a round's first run, so a role that meets a run it does not know reads them again.
   */
  grids?: [string, number[]][];
  round?: number;
}

export function toPayload(sweepId: string, sweep: LoadedSweep, outArg: string | undefined, collectors = 1, round = 0): SweepPayload {
  return {
    ...(sweep.grids ? { grids: [...sweep.grids], round } : {}),
    ...(collectors > 1 ? { collectors } : {}),
    sweepId,
    specFile: sweep.specFile,
    spec: sweep.spec,
    prompts: sweep.prompts,
    template: sweep.template,
    edgeLists: [...sweep.edgeLists],
    armFiles: sweep.armFiles,
    out: outArg ?? sweep.spec.out ?? `runs/${sweep.spec.name}`,
    fingerprint: sweep.fingerprint,
  };
}

export function fromPayload(payload: SweepPayload, outOverride?: string): LoadedSweep {
  const edgeLists = new Map(payload.edgeLists);
  const out = outOverride ?? payload.out;
  const adaptive = !Array.isArray(payload.spec.temperatures);
  const grids = new Map(payload.grids ?? []);
  return {
    specFile: payload.specFile,
    spec: payload.spec,
    prompts: payload.prompts,
    template: payload.template,
    edgeLists,
    armFiles: payload.armFiles,
    runs: planSweep(payload.spec, payload.prompts, payload.specFile, edgeLists, payload.armFiles, adaptive ? grids : undefined),
    out: isAbsolute(out) ? out : resolve(out),
    fingerprint: payload.fingerprint,
    ...(adaptive ? { grids } : {}),
  };
}
