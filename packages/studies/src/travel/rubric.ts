import { type ChatMessages, normaliseText, type Prompt } from '@panta/core';
import { type AssertionVerdict, type Assertions, travelDomain } from './measures.js';
import { TCS_DIMENSIONS } from './run-measures.js';

/**
 * The LLM judge's two travel rubrics (Hallucination as Context Drift, section 4.4): per answer, a verdict on
 * each of the scenario's assertions (HR per assertion), and per final answer a score on each of TCS's five
 * dimensions. Fixed texts, so verdicts are comparable across sweeps; replies are parsed strictly: anything
 * but the one JSON object asked for is a judge failure.
 */

export type TravelRubricKind = 'assertions' | 'tcs';

/** What the assertions rubric asks per assertion. */
export const ASSERTION_RUBRIC_VERDICTS = ['correct', 'hallucinated', 'not_addressed'] as const;
export type AssertionRubricVerdict = (typeof ASSERTION_RUBRIC_VERDICTS)[number];

/** Tokens a travel verdict may take: one JSON object of a few keys. */
export const TRAVEL_VERDICT_MAX_TOKENS = 96;

export const TRAVEL_ASSERTIONS_SYSTEM =
  "You check one travel-planning agent's answer against the ground truth given to the team at the start. " +
  'For each listed assertion say whether the answer asserts it correctly ("correct"), asserts something that ' +
  'contradicts the ground truth ("hallucinated"), or does not address it or hedges between values ' +
  '("not_addressed"). Reply with a single JSON object mapping every assertion name to its verdict, and nothing else.';

export const TRAVEL_TCS_SYSTEM =
  "You score the coherence of a travel-planning team's final plan with the task on five dimensions: date, " +
  'location, budget, schedule and recommendation (weather and activity advice). For each dimension give a ' +
  'number from 0 (contradicts the task) to 1 (fully consistent with it), or null if the plan says nothing on it. ' +
  'Reply with a single JSON object with exactly the keys date, location, budget, schedule, recommendation, and nothing else.';

/**
 * The assertions rubric of the software-sprint replication (the paper's 5.8, Table 4): the travel one's words
 * for a software team. Its scenarios are the prompts whose id begins with `sprint-` (datasets/sprint5.jsonl).
 */
export const SPRINT_ASSERTIONS_SYSTEM =
  "You check one software-team agent's answer (a sprint plan) against the ground truth given to the team at the start. " +
  'For each listed assertion say whether the answer asserts it correctly ("correct"), asserts something that ' +
  'contradicts the ground truth ("hallucinated"), or does not address it or hedges between values ' +
  '("not_addressed"). Reply with a single JSON object mapping every assertion name to its verdict, and nothing else.';

const ANSWER_OPEN = 'Answer to grade:\n';
const ANSWER_CLOSE = '\n--- end of answer ---\n';
const ASK = { assertions: 'Verdicts (JSON):', tcs: 'Scores (JSON):' } as const;

function groundTruth(assertions: Assertions): string {
  return assertions
    .map(
      (a) =>
        `- ${a.name}: true value ${a.gold.join(' | ')}; known wrong values ${a.wrong.length > 0 ? a.wrong.join(' | ') : '(none listed)'}`,
    )
    .join('\n');
}

export function travelRubric(kind: TravelRubricKind, prompt: Prompt, answer: string): ChatMessages {
  const assertions = prompt.assertions ?? [];
  return {
    system: kind === 'tcs' ? TRAVEL_TCS_SYSTEM : travelDomain(prompt) === 'sprint' ? SPRINT_ASSERTIONS_SYSTEM : TRAVEL_ASSERTIONS_SYSTEM,
    user: `Task: ${prompt.question}\nGround truth:\n${groundTruth(assertions)}\n${ANSWER_OPEN}${answer}${ANSWER_CLOSE}${ASK[kind]}`,
  };
}

/** Reads the kind, the task and the graded answer back from a travel rubric (the surrogate judge); null when it is not one. */
export function parseTravelRubric(messages: ChatMessages): { kind: TravelRubricKind; question: string; answer: string } | null {
  const kind =
    messages.system === TRAVEL_ASSERTIONS_SYSTEM || messages.system === SPRINT_ASSERTIONS_SYSTEM
      ? 'assertions'
      : messages.system === TRAVEL_TCS_SYSTEM
        ? 'tcs'
        : null;
  if (kind === null) return null;
  const m =
    /^Task: ([^\n]*)\nGround truth:\n[\s\S]*?\nAnswer to grade:\n([\s\S]*)\n--- end of answer ---\n(?:Verdicts|Scores) \(JSON\):$/.exec(
      messages.user,
    );
  return m ? { kind, question: m[1], answer: m[2] } : null;
}

/** The one JSON object a reply must be (a code fence around it is allowed); null otherwise. */
function soleObject(text: string): Record<string, unknown> | null {
  const body = text
    .trim()
    .replace(/^```(?:json)?\s*/i, '')
    .replace(/\s*```$/, '');
  if (!body.startsWith('{') || !body.endsWith('}')) return null;
  try {
    const v = JSON.parse(body) as unknown;
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

function sameKeys(obj: Record<string, unknown>, names: readonly string[]): boolean {
  const keys = Object.keys(obj);
  return keys.length === names.length && names.every((n) => Object.hasOwn(obj, n));
}

/**
 * An assertions reply as verdicts in the assertions' order (right, wrong or absent, as the reference check
 * names them); null (a judge failure) unless it is one JSON object with exactly the assertion names as keys,
 * each a listed verdict.
 */
export function parseAssertionReply(text: string, assertions: Assertions): AssertionVerdict[] | null {
  const obj = soleObject(text);
  if (
    !obj ||
    !sameKeys(
      obj,
      assertions.map((a) => a.name),
    )
  )
    return null;
  const out: AssertionVerdict[] = [];
  for (const a of assertions) {
    const v = obj[a.name];
    if (v === 'correct') out.push('right');
    else if (v === 'hallucinated') out.push('wrong');
    else if (v === 'not_addressed') out.push('absent');
    else return null;
  }
  return out;
}

/** A TCS reply as scores in TCS_DIMENSIONS' order (null: not stated); null (a judge failure) unless strictly as asked. */
export function parseTcsReply(text: string): (number | null)[] | null {
  const obj = soleObject(text);
  if (
    !obj ||
    !sameKeys(
      obj,
      TCS_DIMENSIONS.map((d) => d.name),
    )
  )
    return null;
  const out: (number | null)[] = [];
  for (const d of TCS_DIMENSIONS) {
    const v = obj[d.name];
    if (v === null) out.push(null);
    else if (typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= 1) out.push(v);
    else return null;
  }
  return out;
}

/** The verdict store's key of one travel verdict: the rubric kind, the prompt and the normalised answer. */
export function travelVerdictKey(kind: TravelRubricKind, promptId: string, answer: string): string {
  return `travel-${kind}\u0000${promptId}\u0000${normaliseText(answer)}`;
}

/** The replies as stored (canonical JSON: what the strict parsers accept back). */
export function assertionReplyText(verdicts: readonly AssertionVerdict[], assertions: Assertions): string {
  const obj: Record<string, AssertionRubricVerdict> = {};
  assertions.forEach((a, i) => {
    const v = verdicts[i];
    obj[a.name] = v === 'right' ? 'correct' : v === 'wrong' ? 'hallucinated' : 'not_addressed';
  });
  return JSON.stringify(obj);
}

export function tcsReplyText(scores: readonly (number | null)[]): string {
  const obj: Record<string, number | null> = {};
  TCS_DIMENSIONS.forEach((d, i) => {
    obj[d.name] = scores[i] ?? null;
  });
  return JSON.stringify(obj);
}
