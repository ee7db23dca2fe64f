/**
 * IFEval's strict accuracy (Zhou et al. 2023, "Instruction-Following Evaluation for Large Language Models"),
 * for the instructions whose checks its public definition states exactly: a response follows a prompt when
 * every instruction's check passes on the response as written (strict: no loosening of the text first).
 * Instruction ids and arguments are IFEval's (its `input_data.jsonl`: `instruction_id_list` and `kwargs`, as a
 * prompt's `instructions`, datasets/ifeval.jsonl). 24 of its 25 checks; not implemented (refused by name, when a
 * prompt set is read): language:response_language, which needs a language detector. Counting follows IFEval's
 * code where it is plain (words: runs of \w; paragraphs split on `***` or blank lines); its sentence count uses
 * NLTK's Punkt model, which this approximates by splitting after . ! ? followed by white space, and its case
 * checks also ask langdetect that the text is English, which is not checked here.
 */
export interface IfevalInstruction {
  id: string;
  args?: Record<string, unknown>;
}

type Relation = 'less than' | 'at least';

function compare(count: number, relation: unknown, n: unknown): boolean {
  const target = Number(n);
  return (relation as Relation) === 'less than' ? count < target : count >= target;
}

const words = (text: string): string[] => text.match(/\b[\w'-]+\b/g) ?? [];
/** IFEval's count_words: NLTK's RegexpTokenizer(r"\w+"), so "don't" is two words. */
const wordCount = (text: string): number => (text.match(/[\p{L}\p{N}_]+/gu) ?? []).length;
const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** IFEval's constrained_response options. */
const CONSTRAINED = ['My answer is yes.', 'My answer is no.', 'My answer is maybe.'];
const sentences = (text: string): number => text.split(/(?<=[.!?])\s+/).filter((s) => s.trim() !== '').length;
const occurrences = (text: string, word: string): number =>
  (text.match(new RegExp(`\\b${word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`, 'gi')) ?? []).length;

const CHECKS: Record<string, (text: string, a: Record<string, unknown>) => boolean> = {
  // Python's islower / isupper: every cased letter in that case, and at least one cased letter. IFEval also asks
  // langdetect that the text is English; that part is not checked here.
  'change_case:english_lowercase': (t) => t === t.toLowerCase() && t !== t.toUpperCase(),
  'change_case:english_capital': (t) => t === t.toUpperCase() && t !== t.toLowerCase(),
  'change_case:capital_word_frequency': (t, a) =>
    compare(words(t).filter((w) => w === w.toUpperCase() && /[A-Z]/.test(w)).length, a.capital_relation, a.capital_frequency),
  'punctuation:no_comma': (t) => !t.includes(','),
  'length_constraints:number_words': (t, a) => compare(wordCount(t), a.relation, a.num_words),
  'length_constraints:number_sentences': (t, a) => compare(sentences(t), a.relation, a.num_sentences),
  'length_constraints:number_paragraphs': (t, a) => {
    const parts = t.split(/\s?\*\*\*\s?/);
    return !parts.some((p) => p.trim() === '') && parts.length === Number(a.num_paragraphs);
  },
  'detectable_format:json_format': (t) => {
    const body = t
      .trim()
      .replace(/^```(json|Json|JSON)?/, '')
      .replace(/```$/, '')
      .trim();
    try {
      JSON.parse(body);
      return true;
    } catch {
      return false;
    }
  },
  'length_constraints:nth_paragraph_first_word': (t, a) => {
    const paragraphs = t.split('\n\n');
    const count = paragraphs.filter((p) => p.trim() !== '').length;
    const nth = Number(a.nth_paragraph);
    if (nth > count) return false;
    const paragraph = paragraphs[nth - 1].trim();
    if (paragraph === '') return false;
    let first = '';
    for (const ch of paragraph.split(/\s+/)[0].replace(/^'+/, '').replace(/^"+/, '')) {
      if ('.,?!\'"'.includes(ch)) break;
      first += ch.toLowerCase();
    }
    return count === Number(a.num_paragraphs) && first === String(a.first_word).toLowerCase();
  },
  'detectable_format:constrained_response': (t) => CONSTRAINED.some((c) => t.trim().includes(c)),
  'detectable_format:multiple_sections': (t, a) =>
    t.split(new RegExp(`\\s?${escapeRe(String(a.section_spliter).trim())}\\s?\\d+\\s?`)).length - 1 >= Number(a.num_sections),
  'detectable_format:title': (t) => /<<[^\n]+>>/.test(t),
  'detectable_format:number_bullet_lists': (t, a) =>
    (t.match(/^\s*\*[^*].*$/gm) ?? []).length + (t.match(/^\s*-.*$/gm) ?? []).length === Number(a.num_bullets),
  'detectable_format:number_highlighted_sections': (t, a) =>
    (t.match(/\*[^\n*]+\*/g) ?? []).filter((h) => h.replace(/\*/g, '').trim() !== '').length >= Number(a.num_highlights),
  'detectable_content:number_placeholders': (t, a) => (t.match(/\[.*?\]/g) ?? []).length >= Number(a.num_placeholders),
  'detectable_content:postscript': (t, a) => {
    const marker = String(a.postscript_marker ?? 'P.S.');
    const pattern =
      marker === 'P.P.S'
        ? /\s*p\.\s?p\.\s?s.*$/im
        : marker === 'P.S.'
          ? /\s*p\.\s?s\..*$/im
          : new RegExp(`\\s*${marker.toLowerCase()}.*$`, 'm');
    return pattern.test(t.toLowerCase());
  },
  'keywords:existence': (t, a) => (a.keywords as string[]).every((k) => new RegExp(k, 'i').test(t)),
  'keywords:forbidden_words': (t, a) => (a.forbidden_words as string[]).every((k) => occurrences(t, k) === 0),
  'keywords:frequency': (t, a) => compare(occurrences(t, String(a.keyword)), a.relation, a.frequency),
  'keywords:letter_frequency': (t, a) =>
    compare((t.toLowerCase().match(new RegExp(String(a.letter).toLowerCase(), 'g')) ?? []).length, a.let_relation, a.let_frequency),
  'startend:end_checker': (t, a) =>
    t
      .trim()
      .replace(/^['"]+|['"]+$/g, '')
      .toLowerCase()
      .endsWith(String(a.end_phrase).trim().toLowerCase()),
  'startend:quotation': (t) => {
    const s = t.trim();
    return s.length > 1 && s.startsWith('"') && s.endsWith('"');
  },
  'combination:repeat_prompt': (t, a) => t.trim().toLowerCase().startsWith(String(a.prompt_to_repeat).trim().toLowerCase()),
  'combination:two_responses': (t) => {
    const parts = t.split('******');
    return parts.length === 2 && parts.every((p) => p.trim() !== '') && parts[0].trim() !== parts[1].trim();
  },
};

/** The instruction ids this scorer checks. */
export const IFEVAL_CHECKS: readonly string[] = Object.keys(CHECKS);

/** Whether a response follows one instruction (strict); an instruction without a check here is an error naming it. */
export function followsInstruction(response: string, instruction: IfevalInstruction): boolean {
  const check = CHECKS[instruction.id];
  if (!check) throw new Error(`IFEval instruction ${instruction.id} has no check here (implemented: ${IFEVAL_CHECKS.join(', ')})`);
  return check(response, instruction.args ?? {});
}

/** IFEval strict prompt-level accuracy of one response: 1 when it follows every instruction, else 0. */
export function ifevalStrict(response: string, instructions: readonly IfevalInstruction[]): number {
  return instructions.every((i) => followsInstruction(response, i)) ? 1 : 0;
}
