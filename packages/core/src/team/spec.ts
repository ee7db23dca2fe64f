import { InputError } from '../errors.js';
import type { TeamControls } from '../protocol/control.js';
import type { Dynamics, Protocol, SweepSpec } from '../spec/schema.js';
import { armOf, protocolOf, teamArms } from '../protocol/registry.js';
import { isTeamDynamics, TEAM_SCHEDULES, teamSchedule } from './schedules.js';

/** A `team` block in a spec without a team schedule would change nothing: say so instead of ignoring it. */
export function checkTeamSpec(spec: SweepSpec, dynamics: readonly Dynamics[], file: string): void {
  if (spec.team !== undefined && !dynamics.some(isTeamDynamics))
    throw new InputError(
      file,
      'team',
      'only team schedules read it, and this sweep has none',
      'add dynamics: relay, hub or debate, or remove team',
    );
  if (spec.team?.budget_rule !== undefined && spec.team.token_budget === undefined)
    throw new InputError(
      file,
      'team.budget_rule',
      'it says how team.token_budget is shared over the chain, and this sweep sets no token_budget',
      'add team.token_budget, or remove team.budget_rule',
    );
  const protocols: readonly string[] = Array.isArray(spec.protocol) ? spec.protocol : [spec.protocol];
  if (spec.team?.board_tokens !== undefined && !protocols.some((p) => armOf(p).board === 'shown' || armOf(p).observer === 'table'))
    throw new InputError(
      file,
      'team.board_tokens',
      'only the board arm shows a board (and the table arm its belief table), and this sweep has neither',
      'add protocol: board or table, or remove team.board_tokens',
    );
}

/** What each `team` key does, for the line that refuses it where no schedule of the sweep reads it. */
const TEAM_KEY_WHAT: Record<string, (readers: string) => string> = {
  token_budget: (readers) => `only ${readers} runs share a token budget over the chain`,
  budget_rule: (readers) => `only ${readers} runs share a token budget over the chain`,
  memory: (readers) => `only ${readers} runs read it (the earlier turns in each contribution's prompt)`,
  board_tokens: (readers) => `only the board arm of ${readers} runs shows a board`,
  solution: (readers) => `only ${readers} runs vote on a solution each turn`,
  revisions: (readers) => `only the board arms of ${readers} runs write a board`,
  decision: (readers) => `only ${readers} runs decide a solution each turn`,
};

/** The team schedules that read a `team` key (TEAM_SCHEDULES' `keys`). */
function readersOf(key: string): string[] {
  return Object.entries(TEAM_SCHEDULES)
    .filter(([, s]) => (s.keys as readonly string[]).includes(key))
    .map(([d]) => d);
}

/**
 * A `team` key the sweep's schedules never read (memory on a relay, token_budget on a debate) would be
 * accepted and ignored: refused at parse time, naming the key. `given` is the spec as written (before
 * defaults), so that only keys the user wrote are blamed.
 */
export function checkTeamKeys(given: unknown, dynamics: readonly Dynamics[], file: string): void {
  const team = (given as { team?: unknown }).team;
  if (team === null || typeof team !== 'object') return;
  if (!dynamics.some(isTeamDynamics)) return; // checkTeamSpec says the whole block is unread
  for (const key of Object.keys(team)) {
    const readers = readersOf(key);
    if (readers.length === 0 || dynamics.some((d) => readers.includes(d))) continue;
    throw new InputError(
      file,
      `team.${key}`,
      `${(TEAM_KEY_WHAT[key] ?? ((r) => `only ${r} runs read it`))(readers.join(' and '))}, and this sweep's dynamics are ${dynamics.join(', ')}`,
      `remove team.${key}, or add dynamics: ${readers.join(' or ')}`,
    );
  }
}

/**
 * A new sweep's board revisions, resolved before anything (plan, fingerprint, manifest) reads them: `author`
 * (the paper's) where a relay or hub runs a board arm and the spec says nothing. Stored so, the corpus keeps
 * its rule; a stored spec without the key (a corpus from before the option) was run `object` (teamControls).
 */
export function resolveBoardRevisions(spec: SweepSpec, dynamics: readonly Dynamics[]): void {
  if (spec.team?.revisions !== undefined) return;
  const protocols: readonly string[] = Array.isArray(spec.protocol) ? spec.protocol : [spec.protocol];
  const boards = protocols.some((p) => armOf(p).board !== undefined);
  if (!boards || !dynamics.some((d) => isTeamDynamics(d) && (teamSchedule(d).keys as readonly string[]).includes('revisions'))) return;
  spec.team = { memory: 'all', ...spec.team, revisions: 'author' };
}

/** The spec's `team` settings as a team run carries them. */
export function teamControls(spec: SweepSpec, populated: boolean): TeamControls {
  return {
    memory: spec.team?.memory ?? 'all',
    personas: populated ? 'population' : 'generated',
    ...(spec.team?.token_budget !== undefined ? { tokenBudget: spec.team.token_budget } : {}),
    ...(spec.team?.token_budget !== undefined && spec.team.budget_rule === 'pool' ? { budgetRule: 'pool' as const } : {}),
    ...(spec.team?.board_tokens !== undefined ? { boardTokens: spec.team.board_tokens } : {}),
    ...(spec.team?.solution === 'extracted' ? { solution: 'extracted' as const } : {}),
    ...(spec.team?.revisions !== undefined ? { revisions: spec.team.revisions } : {}),
    ...(spec.team?.decision === 'consensus' ? { decision: 'consensus' as const } : {}),
  };
}

/**
 * Refuses a grid point a team schedule cannot run: a protocol that is not one of its arms, early stopping
 * (a team has no sweeps to settle), `regenerate` on a population. One line naming the field and the fix.
 */
export function checkTeamArm(spec: SweepSpec, dynamics: Dynamics, protocol: Protocol, file: string): void {
  if (!isTeamDynamics(dynamics)) {
    const { population, teams } = protocolOf(protocol);
    if (!population)
      throw new InputError(
        file,
        'protocol',
        `${protocol} is a ${teams.join(' and ')} arm, not a protocol of ${dynamics} populations`,
        `use it with dynamics: ${teams.join(' or ')}`,
      );
    return;
  }
  const arms = teamArms(dynamics);
  if (!arms.includes(protocol)) {
    throw new InputError(
      file,
      'protocol',
      `${dynamics} runs take protocol ${arms.join(', ')}, not ${protocol} (glauber is the plain team)`,
      `grid ${protocol} in a spec whose dynamics are ${placesOf(protocol).join(' or ')}`,
    );
  }
  if (spec.early_stopping)
    throw new InputError(file, 'early_stopping', `${dynamics} runs have no sweeps to stop early`, 'remove early_stopping from a team spec');
  if (spec.team?.token_budget !== undefined && teamSchedule(dynamics).splitsBudget) {
    for (const n of Array.isArray(spec.sizes) ? spec.sizes : Object.values(spec.sizes).flat()) {
      if (Math.floor(spec.team.token_budget / n) < 1)
        throw new InputError(
          file,
          'team.token_budget',
          `a budget of ${spec.team.token_budget} tokens leaves nothing to each of ${n} members`,
          `use a budget of at least ${n}`,
        );
    }
  }
}

/** Where a protocol runs: the team schedules it is an arm of, and populations when it runs on them. */
function placesOf(protocol: string): string[] {
  const { teams, population } = protocolOf(protocol);
  return [...teams, ...(population ? ['asynchronous', 'synchronous'] : [])];
}

/**
 * A new debate sweep's solution extraction (spec `team.solution`): extracted, the paper's, unless the spec says
 * verbatim. loadSweep resolves it into the spec; a stored spec without the key (a corpus from before it) reads
 * back as verbatim.
 */
export function resolveTeamSolution(spec: SweepSpec, dynamics: readonly Dynamics[]): void {
  if (!dynamics.includes('debate') || spec.team?.solution !== undefined) return;
  spec.team = { ...(spec.team ?? { memory: 'all' }), solution: 'extracted' };
}

/**
 * A new relay sweep's token budget rule (spec `team.budget_rule`): pool, the paper's "same total budget of
 * tokens", unless the spec says split. loadSweep resolves it into the spec; a stored spec without the key (a
 * corpus from before it) reads back as split, the rule it was run with.
 */
export function resolveBudgetRule(spec: SweepSpec, dynamics: readonly Dynamics[]): void {
  if (spec.team?.token_budget === undefined || spec.team.budget_rule !== undefined) return;
  if (!dynamics.some((d) => isTeamDynamics(d) && teamSchedule(d).splitsBudget)) return;
  spec.team = { ...spec.team, budget_rule: 'pool' };
}
