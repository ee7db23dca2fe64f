import type { Prompt } from '../dataset.js';
import type { Tag } from '../event.js';
import { isTeamDynamics, teamSchedule } from '../team/schedules.js';
import { teamDrift } from './drift.js';
import { scoreAnswer } from './score.js';

/** The columns of an event row that team metrics read (docs/teams.md). */
export interface TeamEventRow {
  event: number;
  role: string;
  sweep: number;
  agent: number;
  response: string;
  reply_status: string;
  tag: Tag | null;
  prompt_tokens: number;
  completion_tokens: number;
}

/** One row of teams.parquet's metrics: a team run's answer at one turn (relay and hub: one turn). */
export interface TeamTurn {
  /** Debate: turn t = 1..R. Relay and hub: 1, their single answer. */
  turn: number;
  /** The event holding the answer scored (relay: the last hop; hub: the aggregation; debate: the turn's solution). */
  answer_event: number | null;
  answer: string | null;
  tag: Tag | null;
  exact_match: number;
  fact_recall: number;
  /** FOCUS(t) = fact_recall(t) - fact_recall(t - 1) ("Stay Focused" section 3); null on the first turn. */
  focus: number | null;
  /** The turn lies in a run of 2 or more consecutive turns scoring below the best earlier turn. */
  drifting: boolean;
  /** The run's drift onset (a turn number) and recovery, the same on every turn of the run; null without drift. */
  drift_onset: number | null;
  recovered: boolean | null;
  /**
   * The DRIFTJudge's verdict on this turn (turns >= 2 of a debate): `drift`, `no_drift`, or `failure` when the
   * reply is empty or says neither; null where no judge ran (relay, hub, the first turn).
   */
  judge_verdict: 'drift' | 'no_drift' | 'failure' | null;
  /** The turn was generated twice (arm regenerate) / a moderator's feedback followed it (arm drift-policy). */
  regenerated: boolean;
  feedback: boolean;
  /** Calls made and tokens spent in this step (skipped calls and solution rows count nothing; debate persona generation counts in turn 1). */
  calls: number;
  prompt_tokens: number;
  completion_tokens: number;
}

/** Reads a DRIFTJudge reply (docs/teams.md): `DRIFT: <error type>` or `NO DRIFT`; anything else is a failure. */
export function readDriftVerdict(response: string, replyStatus: string): 'drift' | 'no_drift' | 'failure' {
  if (replyStatus !== 'ok') return 'failure';
  const text = response.trim();
  if (/^\W*no\s+drift\b/i.test(text)) return 'no_drift';
  if (/^\W*drift\b/i.test(text)) return 'drift';
  return 'failure';
}

/**
 * A call made: a solution is one only when extracted (a verbatim one is counted, with no prompt), a verdict
 * only when a judge's (drift-policy-gold's is the gold's, with no prompt).
 */
const COUNTED = new Set(['solution', 'drift-judge']);
const made = (r: TeamEventRow) => r.reply_status !== 'skipped' && (!COUNTED.has(r.role) || r.prompt_tokens > 0);

/**
 * The per-turn team metrics of one complete team run, from its event rows (any order). Scores are against
 * the prompt's gold (see scoreAnswer); FOCUS and drift are over fact recall, which equals exact match
 * for single-answer prompts. A turn without an answer row scores 0.
 */
export function teamTurns(dynamics: string, prompt: Prompt, rows: readonly TeamEventRow[]): TeamTurn[] {
  const sorted = [...rows].sort((a, b) => a.event - b.event);
  const sum = (rs: readonly TeamEventRow[]) => ({
    calls: rs.filter(made).length,
    prompt_tokens: rs.reduce((s, r) => s + r.prompt_tokens, 0),
    completion_tokens: rs.reduce((s, r) => s + r.completion_tokens, 0),
  });
  const blank = {
    judge_verdict: null,
    regenerated: false,
    feedback: false,
    focus: null,
    drifting: false,
    drift_onset: null,
    recovered: null,
  };
  const role = isTeamDynamics(dynamics) ? teamSchedule(dynamics).answerRole : undefined;
  if (role !== undefined) {
    const answer = sorted.filter((r) => r.role === role).at(-1) ?? null;
    return [{ turn: 1, ...answerOf(prompt, answer), ...blank, ...sum(sorted) }];
  }
  const turns = [...new Set(sorted.filter((r) => r.sweep >= 1).map((r) => r.sweep))].sort((a, b) => a - b);
  const out = turns.map((t) => {
    const step = sorted.filter((r) => r.sweep === t || (t === turns[0] && r.sweep === 0));
    const solutions = step.filter((r) => r.role === 'solution' && r.reply_status !== 'skipped' && r.sweep === t);
    const judge = step.find((r) => r.role === 'drift-judge');
    return {
      turn: t,
      ...answerOf(prompt, solutions.at(-1) ?? null),
      ...blank,
      judge_verdict: judge ? readDriftVerdict(judge.response, judge.reply_status) : null,
      regenerated: solutions.length > 1,
      feedback: step.some((r) => r.role === 'feedback' && r.reply_status !== 'skipped'),
      ...sum(step),
    };
  });
  const drift = teamDrift(out.map((o) => o.fact_recall));
  const onset = drift.drift_onset === null ? null : out[drift.drift_onset].turn;
  return out.map((o, i) => ({
    ...o,
    focus: i === 0 ? null : drift.focus[i - 1],
    drifting: drift.drifting[i],
    drift_onset: onset,
    recovered: drift.recovered,
  }));
}

function answerOf(prompt: Prompt, row: TeamEventRow | null) {
  const score = scoreAnswer(prompt, row ? row.response : null, row?.tag ?? null);
  return { answer_event: row?.event ?? null, answer: row?.response ?? null, tag: row?.tag ?? null, ...score };
}
