import { InputError } from '../errors.js';
import type { TeamControls } from '../protocol/control.js';
import type { Dynamics, Protocol, SweepSpec } from '../spec/schema.js';
import { armOf, protocolOf, teamArms } from '../protocol/registry.js';
import { isTeamDynamics } from './calls.js';

/** A `team` block in a spec without a team schedule would change nothing: say so instead of ignoring it. */
export function checkTeamSpec(spec: SweepSpec, dynamics: readonly Dynamics[], file: string): void {
  if (spec.team !== undefined && !dynamics.some(isTeamDynamics))
    throw new InputError(
      file,
      'team',
      'only team schedules read it, and this sweep has none',
      'add dynamics: relay, hub or debate, or remove team',
    );
  const protocols: readonly string[] = Array.isArray(spec.protocol) ? spec.protocol : [spec.protocol];
  if (spec.team?.board_tokens !== undefined && !protocols.some((p) => armOf(p).board === 'shown'))
    throw new InputError(
      file,
      'team.board_tokens',
      'only the board arm shows a board, and this sweep has none',
      'add protocol: board, or remove team.board_tokens',
    );
}

/** Which team schedules read each `team` key (board_tokens: the board arm of relay and hub, checked in checkTeamSpec too). */
const TEAM_KEY_READERS: Record<string, { dynamics: readonly Dynamics[]; what: string }> = {
  token_budget: { dynamics: ['relay'], what: 'only relay runs split a token budget over the chain' },
  memory: { dynamics: ['debate'], what: "only debate runs read it (the earlier turns in each contribution's prompt)" },
  board_tokens: { dynamics: ['relay', 'hub'], what: 'only the board arm of relay and hub runs shows a board' },
};

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
    const reader = TEAM_KEY_READERS[key];
    if (!reader || dynamics.some((d) => reader.dynamics.includes(d))) continue;
    throw new InputError(
      file,
      `team.${key}`,
      `${reader.what}, and this sweep's dynamics are ${dynamics.join(', ')}`,
      `remove team.${key}, or add dynamics: ${reader.dynamics.join(' or ')}`,
    );
  }
}

/** The spec's `team` settings as a team run carries them. */
export function teamControls(spec: SweepSpec, populated: boolean): TeamControls {
  return {
    memory: spec.team?.memory ?? 'all',
    personas: populated ? 'population' : 'generated',
    ...(spec.team?.token_budget !== undefined ? { tokenBudget: spec.team.token_budget } : {}),
    ...(spec.team?.board_tokens !== undefined ? { boardTokens: spec.team.board_tokens } : {}),
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
      `grid ${protocol} in a spec whose dynamics are ${dynamics === 'debate' ? 'asynchronous or synchronous' : 'debate or a population'}`,
    );
  }
  if (spec.early_stopping)
    throw new InputError(file, 'early_stopping', `${dynamics} runs have no sweeps to stop early`, 'remove early_stopping from a team spec');
  if (spec.team?.token_budget !== undefined && dynamics === 'relay') {
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
