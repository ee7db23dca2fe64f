import {
  graphDistances,
  graphFor,
  rngFrom,
  SpatialCorrelation,
  secondMomentLength,
  toSpin,
  type GeometrySpec,
  type Whitening,
} from '@panta/core';
import { shardPath } from '../corpus-paths.js';
import { readEvents } from '../event-reader.js';
import { readWhitening } from './whitening-io.js';

/** Lattices C(r) and xi are measured on, with the dimension xi's second moment divides by. */
const LATTICE_DIMENSION: Readonly<Record<string, number>> = { ring: 1, torus2d: 2, torus3d: 3 };

/** Populations above this size are not correlated pair by pair (N^2 dot products per snapshot). */
export const MAX_CORRELATED_AGENTS = 4096;

/** What C(r) needs of a run. */
export interface CorrelatedRun {
  runId: string;
  configId: string;
  n: number;
  seed: number;
  geometry: GeometrySpec;
  prompt: { id: string };
}

/** C(r) for r = 0..max distance and xi of one configuration and encoder. */
export interface Correlation {
  corr: (number | null)[];
  xi: number | null;
}

/** The key of a configuration and encoder's correlation. */
export const correlationKey = (configId: string, encoder: string) => `${configId}\u0000${encoder}`;

/** Each agent's latest embedding in a run's shard (the snapshot after its last sweep), as spins. */
async function finalSpins(out: string, run: CorrelatedRun, encoder: string, w: Whitening): Promise<Float64Array[]> {
  const column = `emb_${encoder}`;
  const latest = new Array<Float32Array>(run.n);
  for await (const b of readEvents([shardPath(out, run.runId)], { columns: ['agent', column], where: "role = 'agent'" })) {
    const vectors = b.columns[column] as Float32Array;
    const d = b.dims[column];
    for (let r = 0; r < b.rows; r++) latest[(b.columns.agent as number[])[r]] = vectors.slice(r * d, (r + 1) * d);
  }
  // Answers repeat: each distinct embedding is whitened once.
  const cache = new Map<string, Float64Array>();
  return latest.map((v) => {
    const key = Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64');
    let spin = cache.get(key);
    if (!spin) cache.set(key, (spin = toSpin(w, v)));
    return spin;
  });
}

/**
 * C(r) at graph distance r on each trial's last snapshot, averaged over trials, and the second-moment length
 * xi (docs/DESIGN.md#phase), per configuration on a lattice (ring, torus2d, torus3d) of at most
 * MAX_CORRELATED_AGENTS agents and per encoder, with the spins of the corpus's whitening.
 */
export async function latticeCorrelations(
  out: string,
  runs: readonly CorrelatedRun[],
  encoders: readonly { name: string }[],
): Promise<Map<string, Correlation>> {
  const byConfig = new Map<string, CorrelatedRun[]>();
  for (const r of runs)
    if (r.geometry.kind in LATTICE_DIMENSION && r.n <= MAX_CORRELATED_AGENTS)
      byConfig.set(r.configId, [...(byConfig.get(r.configId) ?? []), r]);
  const distances = new Map<string, Int32Array>();
  const whitenings = new Map<string, Whitening>();
  const result = new Map<string, Correlation>();
  for (const [configId, trials] of byConfig) {
    const first = trials[0];
    const shape = `${first.geometry.kind}:${first.n}`;
    if (!distances.has(shape)) {
      const graph = graphFor(first.geometry, first.n, first.seed, new Map());
      const rng = rngFrom(0);
      distances.set(
        shape,
        graphDistances(first.n, (i) => graph.neighbours(i, rng)),
      );
    }
    for (const e of encoders) {
      const wKey = `${first.prompt.id}\u0000${e.name}`;
      if (!whitenings.has(wKey)) whitenings.set(wKey, await readWhitening(out, first.prompt.id, e.name));
      const w = whitenings.get(wKey)!;
      const acc = new SpatialCorrelation(first.n, distances.get(shape)!);
      for (const run of trials) acc.add(await finalSpins(out, run, e.name, w), w.dim);
      const corr = acc.correlation();
      result.set(correlationKey(configId, e.name), {
        corr,
        xi: secondMomentLength(corr, acc.shell(), LATTICE_DIMENSION[first.geometry.kind]),
      });
    }
  }
  return result;
}
