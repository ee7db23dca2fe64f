import type { Tag } from '../event.js';
import type { AnnealingSpec, EarlyStoppingSpec, Protocol } from '../spec/schema.js';

/**
 * Between-sweep control (DESIGN.md 2.8, 4): early stopping and drift-policy look at a run's snapshot after
 * each sweep and decide what the next sweep does. Everything here is a pure function of the snapshot, so a
 * run stops, or is moderated, at the same sweep whatever the concurrency or the crash history.
 */

/** One sweep's control measurement. */
export interface SweepControl {
  /** Magnetisation of the snapshot's raw embeddings centred on the run's t = 0 mean (the whitening is not known yet). */
  m: number;
  /** Hallucination density of the snapshot; null when no answer is correct or hallucinated. */
  rho: number | null;
}

/** What a run carries from one sweep boundary to the next (JSON: it travels in tasks and the control journal). */
export interface ControlState {
  /** Per sweep 0..t: the measurement the stop rule reads. */
  history: SweepControl[];
  /** Centre of the control magnetisation: see controlCentre. */
  mean0: number[];
  /** drift-policy: the snapshot's majority answer (medoid) after the last sweep. */
  majority?: string;
  /** drift-policy: the moderator message every prompt of the next sweep shows, if the last sweep drifted. */
  moderator?: string;
  /** The run stops after this sweep (early stopping). */
  stop: boolean;
}

export interface RunControls {
  tau: number;
  /** Encoder whose raw embeddings measure divergence and control magnetisation; default the first. */
  encoder?: string;
  annealing?: AnnealingSpec;
  earlyStopping?: EarlyStoppingSpec;
}

/** True when a run of this protocol and these controls stops between sweeps to look at its snapshot. */
export function hasBoundaries(protocol: Protocol, controls: RunControls): boolean {
  return protocol === 'drift-policy' || controls.earlyStopping !== undefined;
}

/**
 * Where a run with boundaries is held after its boundary of sweep `decided` (-1: none yet): the first event
 * of the sweep after the next boundary; or, once it stopped, the first event it will never run.
 */
export function boundaryGate(run: { n: number; sweeps: number }, decided: number, stop: boolean): number {
  if (stop) return (decided + 1) * run.n;
  const next = decided + 1;
  return next < run.sweeps ? (next + 1) * run.n : Number.POSITIVE_INFINITY;
}

/** Sampling temperature at sweep t: the run's, or annealed from it at sweep 1 to `to` at the last sweep. */
export function temperatureAt(temperature: number, sweep: number, sweeps: number, annealing: AnnealingSpec | undefined): number {
  if (!annealing || sweep <= 1 || sweeps <= 1) return temperature;
  const x = (sweep - 1) / (sweeps - 1);
  if (annealing.shape === 'geometric' && temperature > 0 && annealing.to > 0) return temperature * (annealing.to / temperature) ** x;
  return temperature + (annealing.to - temperature) * x;
}

function dot(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

/** Cosine distance between one vector and the mean of others (ssvp's Context Divergence); 0 when there are none. */
export function divergence(own: ArrayLike<number>, others: readonly ArrayLike<number>[]): number {
  if (others.length === 0) return 0;
  const d = own.length;
  const mean = new Float64Array(d);
  for (const o of others) for (let i = 0; i < d; i++) mean[i] += o[i];
  const na = Math.sqrt(dot(own, own));
  const nb = Math.sqrt(dot(mean, mean));
  if (na === 0 || nb === 0) return 1;
  return 1 - dot(own, mean) / (na * nb);
}

/** The answer whose embedding is nearest the snapshot's mean: the population's majority answer, for free text. */
export function medoid(texts: readonly string[], embeddings: readonly ArrayLike<number>[]): string {
  const d = embeddings[0]?.length ?? 0;
  const mean = new Float64Array(d);
  for (const e of embeddings) for (let i = 0; i < d; i++) mean[i] += e[i];
  let best = 0;
  let bestScore = -Infinity;
  embeddings.forEach((e, j) => {
    const s = dot(e, mean);
    if (s > bestScore) {
      bestScore = s;
      best = j;
    }
  });
  return texts[best] ?? '';
}

export function meanOf(embeddings: readonly ArrayLike<number>[]): number[] {
  const d = embeddings[0]?.length ?? 0;
  const mean = new Array<number>(d).fill(0);
  for (const e of embeddings) for (let i = 0; i < d; i++) mean[i] += e[i] / embeddings.length;
  return mean;
}

/**
 * The centre of a run's control magnetisation: the mean of its t = 0 embeddings, or the origin when they hold
 * fewer than two distinct vectors. Centring a unanimous snapshot on its own mean would read m = 0 (every
 * answer at the centre); like the whitening's degenerate-pool fallback, it is then read raw, m = 1.
 */
export function controlCentre(embeddings: readonly ArrayLike<number>[]): number[] {
  const first = embeddings[0];
  const varied = embeddings.some((e) => {
    for (let i = 0; i < e.length; i++) if (e[i] !== first![i]) return true;
    return false;
  });
  return varied ? meanOf(embeddings) : new Array<number>(first?.length ?? 0).fill(0);
}

/** The control measurement of a snapshot (see SweepControl). */
export function measureControl(embeddings: readonly ArrayLike<number>[], tags: readonly Tag[], mean0: readonly number[]): SweepControl {
  const d = mean0.length;
  const sum = new Float64Array(d);
  const centred = new Float64Array(d);
  for (const e of embeddings) {
    let norm = 0;
    for (let i = 0; i < d; i++) {
      centred[i] = e[i] - mean0[i];
      norm += centred[i] * centred[i];
    }
    norm = Math.sqrt(norm);
    if (norm > 0) for (let i = 0; i < d; i++) sum[i] += centred[i] / norm;
  }
  const m = Math.sqrt(dot(sum, sum)) / Math.max(1, embeddings.length);
  let correct = 0;
  let hallucinated = 0;
  for (const t of tags) {
    if (t === 'correct') correct++;
    else if (t === 'hallucinated') hallucinated++;
  }
  return { m, rho: correct + hallucinated > 0 ? hallucinated / (correct + hallucinated) : null };
}

/**
 * The control state after sweep `sweep`: the snapshot's measurement appended (sweep 0 also fixes the centre),
 * and whether the run stops there (never after its last sweep). The engine's boundaries and verify both fold
 * a run's snapshots through it, so what verify checks is what the engine decided.
 */
export function nextControl(
  previous: ControlState | undefined,
  sweep: number,
  embeddings: readonly ArrayLike<number>[],
  tags: readonly Tag[],
  rule: EarlyStoppingSpec | undefined,
  sweeps: number,
): ControlState {
  const mean0 = sweep === 0 || !previous ? controlCentre(embeddings) : previous.mean0;
  const history = [...(previous?.history ?? []), measureControl(embeddings, tags, mean0)];
  return { history, mean0, stop: rule !== undefined && sweep < sweeps && shouldStop(history, rule) };
}

/**
 * The early-stopping rule: after sweep t >= max(min_sweeps, window), stop when magnetisation has stayed
 * within `tolerance` and rho within `rho_tolerance` of their values at sweep t over the last `window` sweeps.
 */
export function shouldStop(history: readonly SweepControl[], rule: EarlyStoppingSpec): boolean {
  const t = history.length - 1;
  if (t < Math.max(rule.min_sweeps, rule.window)) return false;
  const now = history[t];
  for (let i = 1; i <= rule.window; i++) {
    const then = history[t - i];
    if (Math.abs(now.m - then.m) > rule.tolerance) return false;
    if ((now.rho === null) !== (then.rho === null)) return false;
    if (now.rho !== null && Math.abs(now.rho - then.rho!) > rule.rho_tolerance) return false;
  }
  return true;
}
