import { InputError, redact } from '@panta/core';
import type { Redis } from 'ioredis';
import { redisNow } from './redis.js';
import type { SweepStore } from './redis/sweep-store.js';

/**
 * A scheduler and a collector started together (compose, Slurm) may start in either order: a refusal recorded
 * this long before the scheduler started is still this attempt's. An older one belongs to an earlier attempt
 * that a new collector may well pass (the folder was deleted, the models mounted).
 */
export const REFUSAL_GRACE_MS = 60_000;

interface Refusal {
  file: string;
  field: string;
  problem: string;
  fix: string;
  /** Redis's clock, not the collector's: scheduler and collector may run on hosts whose clocks differ. */
  at: number;
}

/**
 * Records why the collector refused the sweep (bad input: a corpus of another sweep at its --out, missing
 * encoder models), so that the scheduler stops with the same line and exit 2 instead of waiting for a
 * collector that will never answer (under Slurm, holding every node until the time limit).
 */
export async function recordRefusal(redis: Redis, store: SweepStore, error: InputError): Promise<void> {
  const refusal: Refusal = {
    file: redact(error.file),
    field: error.field,
    problem: redact(error.problem),
    fix: redact(error.fix),
    at: await redisNow(redis),
  };
  await store.setRefusal(JSON.stringify(refusal));
}

/** The collector's refusal recorded since `since` (Redis's clock) less the grace, as the error to stop with. */
export async function readRefusal(store: SweepStore, since: number): Promise<InputError | null> {
  const text = await store.refusal();
  if (!text) return null;
  const r = JSON.parse(text) as Refusal;
  if (r.at < since - REFUSAL_GRACE_MS) return null;
  return new InputError(r.file, r.field, `the collector refused the sweep: ${r.problem}`, r.fix);
}

/** A collector that got past its checks clears an earlier attempt's refusal. */
export async function clearRefusal(store: SweepStore): Promise<void> {
  await store.clearRefusal();
}
