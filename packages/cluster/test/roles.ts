import { setTimeout as sleep } from 'node:timers/promises';
import { pantaProcess, type PantaProcess } from '../../../test/helpers.js';

/** Every `panta` process a test file started, killed when its test ends (a failed test leaves none behind). */
export class Roles {
  private readonly started: PantaProcess[] = [];

  constructor(private readonly env: () => Record<string, string>) {}

  spawn(args: string[], env: Record<string, string> = {}): PantaProcess {
    const p = pantaProcess(args, { ...this.env(), ...env });
    this.started.push(p);
    return p;
  }

  killAll(): void {
    for (const p of this.started.splice(0)) p.kill('SIGKILL');
  }
}

/** Waits until `p` has written `text` to stderr (a role's log line), or fails the test with what it wrote. */
export async function logged(p: PantaProcess, text: string | RegExp, tries = 600): Promise<void> {
  const seen = () => (typeof text === 'string' ? p.stderr().includes(text) : text.test(p.stderr()));
  for (let i = 0; i < tries && !seen(); i++) await sleep(100);
  if (!seen()) throw new Error(`no log line ${String(text)}; stderr: ${p.stderr().slice(-2000)}`);
}

/** Lines a role logged at error level (pino level 50) or above. */
export function errorLines(stderr: string): string[] {
  return stderr.split('\n').filter((l) => /"level":(50|60)/.test(l));
}
