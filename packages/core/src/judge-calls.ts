import type { RunPlan } from './plan.js';
import type { ChatMessages } from './prompt-types.js';

/** What `panta plan` needs to price one rubric: its prompt tokens for an answer of the given length. */
export interface JudgeCallsInput {
  /** An answer's tokens (the spec's max_tokens). */
  answer: number;
  /** Calls of the factual rubric on the run (one per answer). */
  answers: number;
  /** Tokens of a rubric's messages, at CHARS_PER_TOKEN characters a token. */
  tokens(messages: ChatMessages): number;
}

/**
 * Calls an LLM judge makes beyond its factual rubric for the runs a study's table scores (counted by `panta
 * plan`, priced as the judge's, listed right after the judge's own calls). Added with registerJudgeCalls.
 */
export interface JudgeCallsDef {
  /** The call kind `panta plan` lists. */
  readonly kind: string;
  /** The run's calls of this kind, or null for a run the table does not score. */
  cost(run: RunPlan, input: JudgeCallsInput): { calls: number; promptTokens: number; completionTokens: number } | null;
}

const JUDGE_CALLS: JudgeCallsDef[] = [];

/** Adds a study's judge calls to `panta plan`; a kind already taken is refused. */
export function registerJudgeCalls(def: JudgeCallsDef): void {
  if (def.kind === 'judge' || JUDGE_CALLS.some((d) => d.kind === def.kind))
    throw new Error(`judge call kind "${def.kind}" is already registered`);
  JUDGE_CALLS.push(def);
}

/** The judge calls studies added, in the order they were registered. */
export function judgeCalls(): readonly JudgeCallsDef[] {
  return JUDGE_CALLS;
}

/** Whether a call kind is the LLM judge's (its own rubric, or one a study added): priced and placed as the judge's. */
export function isJudgeKind(kind: string): boolean {
  return kind === 'judge' || JUDGE_CALLS.some((d) => d.kind === kind);
}
