import { InputError } from './errors.js';
import type { RunPlan } from './plan.js';
import type { PromptTemplate } from './prompt-types.js';
import { MAX_LIVE_ENTRIES } from './protocol/board.js';
import { BOARD_INSTRUCTION } from './protocol/prompts.js';
import { longestBriefing, longestPersona } from './hidden-text.js';
import { CHARS_PER_TOKEN } from './names.js';
import { protocolOf } from './protocol/registry.js';
import { CONTEXT_MERGE_INSTRUCTION } from './protocol/ssvp.js';
import type { SweepSpec } from './spec/schema.js';
import { boundingTemperatures } from './spec/temperatures.js';
import { teamAnswerTokens, teamCallCosts } from './team/cost.js';
import { teamSchedule } from './team/schedules.js';

/** Characters a board entry adds to a neighbour line besides its own text: id, revision, confidence. */
const ENTRY_FRAME = 48;

/**
 * The largest prompt a run can send, in tokens, with every answer it quotes at the full max_tokens: the
 * only bound that holds whatever the model writes. The reply's own max_tokens must fit too. A belief-board
 * neighbour line holds up to MAX_LIVE_ENTRIES entries, each from a reply of up to max_tokens; drift-policy
 * adds a moderator message (one reply); a population adds its longest hidden text.
 */
export function worstPromptTokens(run: RunPlan, template: PromptTemplate, maxTokens: number): number {
  const protocol = protocolOf(run.protocol);
  const board = protocol.version === 'board';
  const everyone = protocol.reads === 'everyone';
  const persona = run.population
    ? longestPersona(run.population.entries) + longestBriefing(run.prompt.briefings) * (everyone ? run.n : 1)
    : 0;
  const fixed =
    template.system.length +
    template.update.length +
    run.prompt.question.length +
    16 +
    persona +
    (board ? BOARD_INSTRUCTION.length + 1 : 0);
  const perAnswer = board ? MAX_LIVE_ENTRIES : 1;
  const perLine = template.neighbour.length + String(run.n).length + (board ? MAX_LIVE_ENTRIES * ENTRY_FRAME : 0);
  // A protocol with boundaries (drift-policy) may add a moderator's message (one reply) to every prompt.
  const moderator = protocol.boundaries ? maxTokens + 4 : 0;
  // full-broadcast reads every other agent; a ContextMerge quotes the context plus one incoming summary.
  const k = everyone ? run.n - 1 : run.k;
  const merge = protocol.version === 'summary' ? maxTokens + Math.ceil(CONTEXT_MERGE_INSTRUCTION.length / CHARS_PER_TOKEN) + 16 : 0;
  return Math.ceil((fixed + k * perLine) / CHARS_PER_TOKEN) + (1 + k * perAnswer) * maxTokens + moderator + merge;
}

/** Fails the plan when the backend cannot take the grid's temperatures (Anthropic: 0 to 1). */
export function checkBackendLimits(spec: SweepSpec, file: string): void {
  if (spec.backend.kind !== 'anthropic') return;
  const listed = boundingTemperatures(spec.temperatures);
  const i = listed.findIndex((t) => t > 1);
  if (i >= 0) {
    throw new InputError(
      file,
      Array.isArray(spec.temperatures) ? `temperatures[${i}]` : `temperatures.adaptive.range[${i}]`,
      `${listed[i]} is above 1, the highest temperature the Anthropic API accepts`,
      'use temperatures from 0 to 1 with an anthropic backend',
    );
  }
}

/**
 * Fails the plan, before anything runs, when a run's prompts may not fit the backend's context window:
 * never truncate silently. Suggests the annealed mean field (`sample: k`) with the largest k that fits.
 */
export function checkContextBudget(spec: SweepSpec, runs: readonly RunPlan[], template: PromptTemplate, file: string): void {
  const limit = spec.backend.kind === 'surrogate' ? undefined : spec.backend.max_context_tokens;
  if (!limit) return;
  const room = limit - spec.max_tokens;
  for (const run of runs) {
    if (run.controls.team) {
      checkTeamContext(run, spec.max_tokens, limit, file);
      continue;
    }
    const need = worstPromptTokens(run, template, spec.max_tokens);
    if (need <= room) continue;
    const gi = spec.geometries.indexOf(run.geometry);
    let k = run.k;
    while (k > 1 && worstPromptTokens({ ...run, k }, template, spec.max_tokens) > room) k--;
    // A smaller full mean field also has fewer digits in its agents' ids: its largest N is searched for itself.
    let n = 2;
    for (let hi = run.n; hi - n > 1; ) {
      const mid = Math.floor((n + hi) / 2);
      if (worstPromptTokens({ ...run, n: mid, k: mid - 1 }, template, spec.max_tokens) <= room) n = mid;
      else hi = mid;
    }
    const fix =
      run.geometry.kind === 'meanfield'
        ? `use {kind: meanfield, sample: ${k}} (annealed mean field) or sizes up to ${n} for full mean field`
        : `use smaller sizes, a smaller max_tokens, or a model with a longer context`;
    throw new InputError(
      file,
      `geometries[${gi}]`,
      `a ${run.geometryLabel} prompt at N = ${run.n} may need ${need.toLocaleString('en-US')} tokens (k = ${run.k} answers of up to max_tokens = ${spec.max_tokens}), over max_context_tokens ${limit.toLocaleString('en-US')} less the reply`,
      fix,
    );
  }
}

/** A team call's largest prompt (every text it reads max_tokens long) and its reply must fit the model's context. */
function checkTeamContext(run: RunPlan, maxTokens: number, limit: number, file: string): void {
  const costs = teamCallCosts(run, maxTokens);
  const worst = costs.reduce((w, c) => (c.largestPromptTokens > w.largestPromptTokens ? c : w), costs[0]);
  if (!worst) return;
  const reply = teamAnswerTokens(run, maxTokens);
  if (worst.largestPromptTokens + reply <= limit) return;
  throw new InputError(
    file,
    'sizes',
    `a ${run.dynamics} ${worst.role} call of ${run.configId} may need ${worst.largestPromptTokens.toLocaleString('en-US')} prompt tokens (every text it reads max_tokens = ${reply} long), over max_context_tokens ${limit.toLocaleString('en-US')} less the reply`,
    teamSchedule(run.dynamics).contextFix,
  );
}
