/**
 * What an answer says about a prompt, found by phrase matching: the basis of the reference judge, and how
 * the surrogate agent reads its neighbours.
 */
export type AnswerClass = { kind: 'correct' } | { kind: 'false'; index: number } | { kind: 'not_known' };

/** Lowercase, digits grouped ("1,729" is "1729"), apostrophes dropped, other punctuation as spaces. */
export function normaliseText(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/(\d)[,_](?=\d)/g, '$1')
    .replace(/['’‘`]/g, '')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

/** What classifying reads of a prompt (a dataset's Prompt is one). */
type Prompt = { readonly accepted: readonly string[]; readonly false_answers: readonly string[] };

interface Phrases {
  accepted: string[];
  falseAnswers: string[];
}

const cache = new WeakMap<Prompt, Phrases>();

function phrasesOf(prompt: Prompt): Phrases {
  let p = cache.get(prompt);
  if (!p) {
    p = {
      accepted: prompt.accepted.map((a) => ` ${normaliseText(a)} `),
      falseAnswers: prompt.false_answers.map((a) => ` ${normaliseText(a)} `),
    };
    cache.set(prompt, p);
  }
  return p;
}

/**
 * Correct when some accepted phrase occurs as whole words and no known false answer does; false when a
 * known false answer occurs and no accepted phrase does; otherwise (neither, or both) not known.
 */
export function classifyAnswer(prompt: Prompt, text: string): AnswerClass {
  const hay = ` ${normaliseText(text)} `;
  const phrases = phrasesOf(prompt);
  const correct = phrases.accepted.some((a) => hay.includes(a));
  const falseIndex = phrases.falseAnswers.findIndex((a) => hay.includes(a));
  if (correct && falseIndex < 0) return { kind: 'correct' };
  if (!correct && falseIndex >= 0) return { kind: 'false', index: falseIndex };
  return { kind: 'not_known' };
}
