import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * What a process knows of a sweep's progress, cumulative since that process (or the session it reads)
 * started. Every field is optional: a worker knows its calls but not the sweep's total, the dashboard knows
 * the totals but not the tokens of a distributed sweep.
 */
export interface MetricsSnapshot {
  /** Events written (role worker: events this worker committed). */
  eventsWritten?: number;
  /** Events answered (calls done), ahead of eventsWritten while rows wait to be appended. */
  eventsExecuted?: number;
  /** Events of the whole sweep. */
  eventsTotal?: number;
  /** LLM calls in flight. */
  inflight?: number;
  /** LLM calls (retries included), tokens (prompt + completion) and retries: cumulative totals. */
  calls?: number;
  tokens?: number;
  retries?: number;
  /** Events queued again after their job went missing (distributed). */
  requeued?: number;
  runsTotal?: number;
  runsActive?: number;
  runsFinished?: number;
  runsFailed?: number;
  /** Events written per second; when left out, measured here from eventsWritten over the last 5 s. */
  eventsPerSecond?: number;
}

type GaugeField =
  | 'eventsWritten'
  | 'eventsExecuted'
  | 'eventsTotal'
  | 'inflight'
  | 'runsTotal'
  | 'runsActive'
  | 'runsFinished'
  | 'runsFailed'
  | 'eventsPerSecond';
type CounterField = 'calls' | 'tokens' | 'retries' | 'requeued';

const GAUGES: Record<GaugeField, [string, string]> = {
  eventsWritten: ['panta_events_written', 'Events written to the corpus (role worker: events this worker committed).'],
  eventsExecuted: [
    'panta_events_executed',
    'Events whose calls were answered (or found on disk by a resume); ahead of panta_events_written while rows wait to be appended.',
  ],
  eventsTotal: ['panta_events_planned', 'Events of the whole sweep: (sweeps + 1) N summed over runs.'],
  inflight: ['panta_calls_in_flight', 'LLM calls in flight.'],
  runsTotal: ['panta_runs_planned', 'Runs of the sweep.'],
  runsActive: ['panta_runs_active', 'Runs open now.'],
  runsFinished: ['panta_runs_finished', 'Runs finished (complete or failed).'],
  runsFailed: ['panta_runs_failed', 'Runs that failed in the current session (they resume when the sweep runs again).'],
  eventsPerSecond: ['panta_events_per_second', 'Events written per second over the last few seconds.'],
};

const COUNTERS: Record<CounterField, [string, string]> = {
  calls: ['panta_llm_calls_total', 'LLM calls made, retries included.'],
  tokens: ['panta_llm_tokens_total', 'Tokens used by LLM calls (prompt + completion).'],
  retries: ['panta_llm_retries_total', 'LLM calls beyond the first of an event (the backend retried).'],
  requeued: ['panta_events_requeued_total', 'Events queued again after their job went missing (a killed worker).'],
};

/**
 * Prometheus metrics of a Panta process (prom-client), one series per sweep (label `sweep`), every series
 * labelled with the process's `role` (run, scheduler, worker, dashboard). The same names whoever exposes
 * them: `panta run --metrics-port`, `panta worker --metrics-port`, `panta scheduler --metrics-port` and
 * `panta dashboard` (which serves the metrics of every sweep it watches). Node's process metrics come along
 * (`panta_process_*`, `panta_nodejs_*`).
 */
export class PantaMetrics {
  readonly registry = new Registry();
  private readonly gauges = new Map<GaugeField, Gauge<'sweep'>>();
  private readonly counters = new Map<CounterField, Counter<'sweep'>>();
  /** Last cumulative value seen per sweep and counter: counters advance by the difference. */
  private readonly last = new Map<string, number>();
  private readonly samples = new Map<string, { t: number; events: number }[]>();

  constructor(role: string) {
    this.registry.setDefaultLabels({ role });
    for (const [field, [name, help]] of Object.entries(GAUGES)) {
      this.gauges.set(field as GaugeField, new Gauge({ name, help, labelNames: ['sweep'], registers: [this.registry] }));
    }
    for (const [field, [name, help]] of Object.entries(COUNTERS)) {
      this.counters.set(field as CounterField, new Counter({ name, help, labelNames: ['sweep'], registers: [this.registry] }));
    }
    collectDefaultMetrics({ register: this.registry, prefix: 'panta_' });
  }

  /** Records what is known now of one sweep. Cumulative counts that go down (the source restarted) count again from zero. */
  observe(sweep: string, s: MetricsSnapshot, now = Date.now()): void {
    const snapshot = { ...s };
    if (snapshot.eventsPerSecond === undefined && snapshot.eventsWritten !== undefined)
      snapshot.eventsPerSecond = this.rate(sweep, snapshot.eventsWritten, now);
    for (const [field, gauge] of this.gauges) {
      const v = snapshot[field];
      if (v !== undefined && Number.isFinite(v)) gauge.set({ sweep }, v);
    }
    for (const [field, counter] of this.counters) {
      const v = snapshot[field];
      if (v === undefined || !Number.isFinite(v)) continue;
      const key = `${sweep}\u0000${field}`;
      const before = this.last.get(key) ?? 0;
      const delta = v >= before ? v - before : v;
      this.last.set(key, v);
      counter.inc({ sweep }, delta);
    }
  }

  private rate(sweep: string, events: number, now: number): number {
    const samples = this.samples.get(sweep) ?? [];
    this.samples.set(sweep, samples);
    samples.push({ t: now, events });
    while (samples.length > 2 && now - samples[0].t > 5000) samples.shift();
    const first = samples[0];
    return now > first.t ? Math.max(0, ((events - first.events) * 1000) / (now - first.t)) : 0;
  }

  /** The exposition text (Prometheus text format 0.0.4). */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
