import { InputError } from '@panta/core';
import { readManifestToResume, type Manifest } from '@panta/corpus';
import type { WorkerServices } from './execute-call.js';
import type { LoadedSweep } from './load.js';
import { checkOutFolder } from './out-folder.js';

/**
 * The check every process that writes a sweep's corpus makes first, embedded (sweep.ts) or as the cluster's
 * collector (collector-role.ts): its folder can hold a corpus, and a corpus already there is this sweep's,
 * which is then resumed. Bad input is one line naming `refusal.file` and its fix (exit 2), before anything
 * is written.
 */
export function corpusToResume(sweep: LoadedSweep, refusal: { file: string; fix: string }): Manifest | null {
  checkOutFolder(sweep.out);
  const previous = readManifestToResume(sweep.out);
  if (previous && previous.fingerprint !== sweep.fingerprint && !sweep.formerFingerprints?.includes(previous.fingerprint))
    throw new InputError(refusal.file, 'out', `${sweep.out} holds a corpus of a different sweep${becauseOf(previous, sweep)}`, refusal.fix);
  // A post-hoc pass (panta embed, panta judge) ran on a complete corpus: measuring it again from the spec
  // would drop what the pass added from the manifest and order parameters, and there is nothing left to run.
  if (previous?.posthoc?.length)
    throw new InputError(
      refusal.file,
      'out',
      `${sweep.out} is complete and holds what panta ${previous.posthoc.map((p) => `${p.pass} ${p.name}`).join(', panta ')} added`,
      'nothing is left to run: read it (panta verify, panta report), or choose another --out',
    );
  return previous;
}

/** A default that changed since the corpus was written, and the key that resumes it ('' when none is known). */
function becauseOf(previous: Manifest, sweep: LoadedSweep): string {
  const team = (previous.spec as { team?: { solution?: string; budget_rule?: string } } | undefined)?.team;
  if (team?.solution === undefined && sweep.spec.team?.solution === 'extracted')
    return ' (this release defaults team.solution to extracted; write team: {solution: verbatim} to resume a corpus from before)';
  if (team?.budget_rule === undefined && sweep.spec.team?.budget_rule === 'pool')
    return ' (this release pools team.token_budget over the chain; write team: {budget_rule: split} to resume a corpus from before)';
  return '';
}

/** What a worker needs of a sweep besides the opened backend, encoders and judge: the same in every process. */
export function workerServices(sweep: LoadedSweep, opened: Pick<WorkerServices, 'backend' | 'encoders' | 'judge'>): WorkerServices {
  return { ...opened, template: sweep.template, maxTokens: sweep.spec.max_tokens, fixedLength: sweep.spec.fixed_length };
}
