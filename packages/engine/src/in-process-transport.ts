import { toError } from '@panta/core';
import { unhealthyCause } from '@panta/llm';
import { executeBoundary } from './execute-boundary.js';
import type { WorkerServices } from './execute-call.js';
import { executeEvent } from './execute-event.js';
import type { EventOutcome, Task, Transport, TransportMessage } from './task.js';

/** Embedded mode: workers are async calls in this process, versions live in a Map per run. */
export class InProcessTransport implements Transport {
  private readonly versions = new Map<string, Map<number, string>>();
  private onMessage: (m: TransportMessage) => void = () => {};

  constructor(private readonly services: WorkerServices) {}

  async start(onMessage: (message: TransportMessage) => void): Promise<void> {
    this.onMessage = onMessage;
  }

  private read(runId: string, versions: ArrayLike<number>, what: string): string[] {
    const store = this.versions.get(runId);
    const reads: string[] = new Array(versions.length);
    for (let i = 0; i < versions.length; i++) {
      const text = store?.get(versions[i]);
      if (text === undefined) throw new Error(`${runId}: ${what} reads version ${versions[i]}, which is not published`);
      reads[i] = text;
    }
    return reads;
  }

  dispatch(task: Task): void {
    // A backend that cannot answer (its health breaker tripped) fails the sweep, not the event's run.
    const fail = (error: unknown) =>
      this.onMessage(unhealthyCause(error) ? { type: 'fatal', error: toError(error) } : { type: 'failed', task, error: toError(error) });
    if (task.kind === 'boundary') {
      const values = this.read(task.run.runId, task.versions, `the boundary after sweep ${task.sweep}`);
      executeBoundary(task, values, this.services).then((outcome) => this.onMessage({ type: 'boundary', task, outcome }), fail);
      return;
    }
    const reads = this.read(task.run.runId, task.plan.readVersions, `event ${task.plan.event}`);
    let outcome: Promise<EventOutcome>;
    try {
      outcome = executeEvent(task, reads, this.services);
    } catch (error) {
      // executeEvent builds the prompt synchronously: what fails there fails the event, as a rejection would.
      outcome = Promise.reject(error);
    }
    outcome.then((o) => this.onMessage({ type: 'outcome', task, outcome: o }), fail);
  }

  publish(runId: string, version: number, text: string): void {
    let store = this.versions.get(runId);
    if (!store) this.versions.set(runId, (store = new Map()));
    store.set(version, text);
  }

  forget(runId: string, versions: readonly number[]): void {
    const store = this.versions.get(runId);
    if (!store) return;
    for (const v of versions) store.delete(v);
    if (store.size === 0) this.versions.delete(runId);
  }

  /** Versions held, over all runs: bounded by the planner's window, which a test checks. */
  get heldVersions(): number {
    let n = 0;
    for (const s of this.versions.values()) n += s.size;
    return n;
  }

  async close(): Promise<void> {
    this.versions.clear();
  }
}
