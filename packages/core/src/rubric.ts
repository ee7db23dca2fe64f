import type { Prompt } from './dataset.js';
import type { Tag } from './event.js';
import type { ChatMessages } from './prompt-types.js';

/** Tokens a verdict may take: a one-line JSON object (a cap, so a rambling judge cannot run long). */
export const VERDICT_MAX_TOKENS = 32;

/** The verdicts the rubric asks for; anything else is a judge failure. */
export const VERDICTS = ['correct', 'hallucinated', 'not_known'] as const;

/**
 * The fixed rubric of the LLM judge (docs/DESIGN.md#judges-and-tags): the question, its accepted answers, the known false
 * answers, the false-premise flag and the response; the verdict as one JSON object. Fixed text, so that
 * verdicts are comparable across sweeps and a server's prefix cache serves the instructions.
 */
export const RUBRIC_SYSTEM =
  'You grade one answer to a question. Reply with a single JSON object and nothing else: ' +
  '{"tag": "correct"} if the answer agrees with an accepted answer (or, for a false-premise question, ' +
  'rejects the premise); {"tag": "hallucinated"} if it asserts something false, including any known false ' +
  'answer or an answer that accepts a false premise; {"tag": "not_known"} if it declines, hedges between ' +
  'answers or gives no answer.';

export function rubric(prompt: Prompt, response: string): ChatMessages {
  return {
    system: RUBRIC_SYSTEM,
    user:
      `Question: ${prompt.question}\n` +
      `Accepted answers: ${prompt.accepted.join(' | ')}\n` +
      `Known false answers: ${prompt.false_answers.length > 0 ? prompt.false_answers.join(' | ') : '(none listed)'}\n` +
      `The question rests on a false premise: ${prompt.false_premise ? 'yes' : 'no'}\n` +
      `Answer to grade: ${response}\n` +
      'Verdict (JSON):',
  };
}

/**
 * Reads a verdict robustly: the first JSON object with a valid `tag` (code fences and prose around it are
 * ignored), else a reply that is exactly one tag word. Anything else is null: a judge failure.
 */
export function parseVerdict(text: string): Tag | null {
  const valid = (t: unknown): t is Tag => typeof t === 'string' && (VERDICTS as readonly string[]).includes(t.trim().toLowerCase());
  for (const m of text.matchAll(/\{[^{}]*\}/g)) {
    try {
      const obj = JSON.parse(m[0]) as Record<string, unknown>;
      const tag = obj.tag ?? obj.verdict ?? obj.label;
      if (valid(tag)) return (tag as string).trim().toLowerCase() as Tag;
    } catch {
      // not JSON: keep looking
    }
  }
  const bare = text
    .trim()
    .replace(/^["'`]+|["'`.]+$/g, '')
    .toLowerCase();
  return valid(bare) ? (bare as Tag) : null;
}

/** Reads the question and the graded answer back from a rubric's user message (the surrogate judge). */
export function parseRubric(user: string): { question: string; response: string } | null {
  const m = /^Question: ([^\n]*)\n[\s\S]*\nAnswer to grade: ([^\n]*)\nVerdict \(JSON\):$/.exec(user);
  return m ? { question: m[1], response: m[2] } : null;
}
