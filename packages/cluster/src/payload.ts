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
}

export function toPayload(sweepId: string, sweep: LoadedSweep, outArg: string | undefined, collectors = 1): SweepPayload {
  return {
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
  return {
    specFile: payload.specFile,
    spec: payload.spec,
    prompts: payload.prompts,
    template: payload.template,
    edgeLists,
    armFiles: payload.armFiles,
    runs: planSweep(payload.spec, payload.prompts, payload.specFile, edgeLists, payload.armFiles),
    out: isAbsolute(out) ? out : resolve(out),
    fingerprint: payload.fingerprint,
  };
}
