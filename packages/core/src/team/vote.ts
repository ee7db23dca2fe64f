import { rngFrom } from '../rng.js';

/**
 * The end-of-turn vote (003, appendix A): the plurality of the parsed votes; a vote that names nobody
 * counts for nobody. Ties, all participants when no vote parses, are broken uniformly by the solution
 * event's seed, so the same corpus gives the same solution on every execution.
 */
export function tallyVotes(votes: readonly (number | null)[], size: number, seed: number): number {
  const counts = new Array<number>(size).fill(0);
  for (const v of votes) if (v !== null && v >= 0 && v < size) counts[v]++;
  const top = Math.max(...counts);
  const tied: number[] = [];
  counts.forEach((c, i) => {
    if (c === top) tied.push(i);
  });
  return tied.length === 1 ? tied[0] : tied[rngFrom(seed, 'tie').int(tied.length)];
}
