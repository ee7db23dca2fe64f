import { writeManifest, type Manifest } from '@panta/corpus';
import { codeVersion } from './manifest-start.js';

/** What a session's end adds to the manifest it started with. */
export interface SessionEnd {
  status: Manifest['status'];
  runs: Manifest['runs'];
  eventsWritten: number;
  tags: Manifest['tags'];
  usage: Manifest['usage'];
  files: Manifest['files'];
}

/**
 * Writes the manifest as a session ends: counts, usage and checksums replace the start's; the code version is
 * this process's (a resumed sweep names the code that finished it), the start time stays the first session's.
 */
export function writeFinalManifest(out: string, started: Manifest, end: SessionEnd): Manifest {
  const manifest: Manifest = {
    ...started,
    code: { ...started.code, panta: codeVersion() },
    status: end.status,
    runs: end.runs,
    events: { planned: started.events.planned, written: end.eventsWritten },
    tags: end.tags,
    usage: end.usage,
    files: end.files,
    updated_at: new Date().toISOString(),
  };
  writeManifest(out, manifest);
  return manifest;
}
