/**
 * tau calibration (the synchronisation paper, section 4.5): a merge that a no-sync run would have triggered
 * is a false positive, since nothing was injected to reconcile there. The paper counts the no-sync steps
 * whose CDS exceeds tau (2 of 180 at tau = 0.25: 1.1%; 5.6% at 0.22, 0% at 0.28) and takes the lowest tau
 * that keeps that share below 2%. In a population the gate is per update (an agent and its neighbours), so
 * an observation is one update of the no-sync arm (sweep >= 1) and its gate CDS.
 *
 * The distribution is kept as exceedance counts on the grid tau = 0.00, 0.01, ..., 2.00 (cosine distance
 * lies in [0, 2]), which is all the calibration reads, so it can be stored and re-read for another bound.
 */

/** Grid points per unit of tau. */
export const TAU_GRID = 100;
/** Grid points 0 .. 2 * TAU_GRID. */
const POINTS = 2 * TAU_GRID + 1;

/** The no-sync CDS distribution as the calibration reads it. */
export interface CdsExceedance {
  observations: number;
  /** exceed[k] = number of observations with CDS > k / TAU_GRID, k = 0 .. 2 * TAU_GRID. */
  exceed: number[];
}

/** One line of the calibration table. */
export interface TauShare {
  tau: number;
  /** Observations above tau (false positives). */
  count: number;
  share: number;
}

export interface TauCalibration {
  fp: number;
  observations: number;
  /** The lowest grid tau whose false-positive share is below fp. */
  tau: number;
  /** Shares at tau - 0.03 .. tau + 0.03 (within [0, 2]), the paper's 0.22 / 0.25 / 0.28 among them. */
  table: TauShare[];
}

export function tauAt(k: number): number {
  return k / TAU_GRID;
}

/** Exceedance counts of a list of CDS values (non-finite values are not observations). */
export function cdsExceedance(values: Iterable<number>): CdsExceedance {
  const sorted = Float64Array.from([...values].filter((v) => Number.isFinite(v))).sort();
  const exceed = new Array<number>(POINTS).fill(0);
  let i = 0;
  for (let k = 0; k < POINTS; k++) {
    const tau = tauAt(k);
    while (i < sorted.length && sorted[i] <= tau) i++;
    exceed[k] = sorted.length - i;
  }
  return { observations: sorted.length, exceed };
}

/**
 * The lowest tau on the grid whose false-positive share (observations above it over all observations) is
 * strictly below fp, and the shares around it. Throws RangeError when there is no observation or fp is not
 * in (0, 1]: no share is defined then.
 */
export function calibrateTau(dist: CdsExceedance, fp: number): TauCalibration {
  if (!(fp > 0 && fp <= 1)) throw new RangeError(`a false-positive bound of ${fp} is not in (0, 1]`);
  const n = dist.observations;
  if (n === 0) throw new RangeError('no observation: the share of false positives is undefined');
  if (dist.exceed.length !== POINTS) throw new RangeError(`${dist.exceed.length} exceedance counts, ${POINTS} expected`);
  // exceed is non-increasing and exceed[2 * TAU_GRID] = 0 < fp * n, so the search always ends.
  let k = 0;
  while (dist.exceed[k] / n >= fp) k++;
  const table: TauShare[] = [];
  for (let j = Math.max(0, k - 3); j <= Math.min(POINTS - 1, k + 3); j++)
    table.push({ tau: tauAt(j), count: dist.exceed[j], share: dist.exceed[j] / n });
  return { fp, observations: n, tau: tauAt(k), table };
}
