import { mixSeed } from '@panta/core';
import { FAULT_KINDS, type FaultKind } from './types.js';

export interface FaultDraw {
  kind: FaultKind;
  /** A second uniform draw, for the variants of a kind (Retry-After form, empty-body form). */
  variant: number;
}

/**
 * Decides, for the i-th generation request the server receives, whether it fails and how. The decision is a
 * pure function of (seed, i): a counter-based stream, so a run against the server is reproducible up to the
 * order in which concurrent requests arrive.
 */
export class FaultInjector {
  private counter = 0;
  readonly kinds: readonly FaultKind[];

  constructor(
    readonly rate: number,
    kinds: readonly FaultKind[] = FAULT_KINDS,
    readonly seed = 0,
  ) {
    this.kinds = kinds.length > 0 ? kinds : FAULT_KINDS;
  }

  /** The fault of the next request, or undefined for a healthy one. */
  next(): FaultDraw | undefined {
    const i = this.counter++;
    if (this.rate <= 0) return undefined;
    const u = mixSeed(this.seed, 'fault', i) / 4294967296;
    if (u >= this.rate) return undefined;
    const k = mixSeed(this.seed, 'fault-kind', i);
    return { kind: this.kinds[k % this.kinds.length], variant: mixSeed(this.seed, 'fault-variant', i) / 4294967296 };
  }
}
