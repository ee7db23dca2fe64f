import type { TeamControls } from '../protocol/control.js';
import { rngFrom } from '../rng.js';
import { parseVote } from './prompts.js';

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

/**
 * The participant whose contribution is a debate turn's solution, from the solution event's kept reads: the
 * plurality of the votes (tallyVotes), or with team.decision consensus the last participant, whose
 * contribution is the draft as every participant of the turn improved it.
 */
export function solutionWinner(
  run: { n: number; controls: { team?: TeamControls } },
  kept: readonly { read: { kind: string }; text: string }[],
  seed: number,
): number {
  if (run.controls.team?.decision === 'consensus') return run.n - 1;
  const votes = kept.filter((k) => k.read.kind === 'vote').map((k) => parseVote(k.text, run.n));
  return tallyVotes(votes, run.n, seed);
}
