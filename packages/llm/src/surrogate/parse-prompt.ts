import { InputError, MERGE_NOTE, type ChatMessages, type PromptTemplate } from '@panta/core';

/**
 * Reads a rendered prompt back into what the agent sees: the inverse of core's renderPrompt for one template.
 * The surrogate server needs it, because an HTTP client sends text, not the structured context.
 *
 * Assumptions (they hold for every prompt Panta renders):
 * - answers (the previous one and the neighbours') contain no newline; a prompt that breaks this may not
 *   parse, and the server answers it with a 400 rather than guessing;
 * - the question is one line too, unless `multilineQuestions` is set (the server sets it when its prompt
 *   set has such a question): a question may then swallow lines of a malformed prompt;
 * - the system message is the template's system text, unchanged;
 * - an update template shows {{previous}} and {{neighbours}}, and the neighbour line shows {{answer}}
 *   (otherwise the prompt does not carry what the agent reads, and compilePromptParser refuses the template).
 * When the neighbour line text could also be the no_neighbours text, {{k}} decides if the template shows
 * it; otherwise the prompt is read as having no neighbour.
 */
export interface ParsedPrompt {
  question: string;
  /** t: 0 for the initial message; the {{t}} shown in an update; -1 when the update template hides t. */
  sweep: number;
  /** The agent's own previous answer; undefined at t = 0. */
  previous?: string;
  /** Agent indices of the neighbours, in prompt order (when the line shows {{index}}; else -1 each). */
  neighbourAgents: number[];
  neighbourAnswers: string[];
  /** ssvp above tau: the merge's review, shown in place of the neighbour lines. */
  merge?: string;
}

type Part = string | { slot: string };

const SLOT = /\{\{(question|previous|neighbours|t|T|k|index|answer)\}\}/g;

function split(template: string): Part[] {
  const parts: Part[] = [];
  let last = 0;
  for (const m of template.matchAll(SLOT)) {
    parts.push(template.slice(last, m.index), { slot: m[1] });
    last = m.index + m[0].length;
  }
  parts.push(template.slice(last));
  return parts.filter((p) => p !== '');
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/** String(temperature): what renderPrompt writes for {{T}}. */
const NUMBER = '-?(?:\\d+(?:\\.\\d+)?(?:e[-+]\\d+)?|Infinity|NaN)';
/** Answers hold no newline. */
const ANSWER = '[^\\n]*';

const GROUP: Record<string, string> = { question: 'q', previous: 'p', t: 't', T: 'T', k: 'k', index: 'i', answer: 'a' };

/**
 * A regex source for a template: literals escaped, each slot in `slots` a named group on first use and a
 * back-reference after, slots rendered empty dropped, and {{neighbours}} replaced by `neighbours`.
 */
function source(parts: Part[], slots: Record<string, string>, named: boolean, neighbours = ''): string {
  const seen = new Set<string>();
  let out = '';
  for (const part of parts) {
    if (typeof part === 'string') {
      out += escapeRegExp(part);
      continue;
    }
    if (part.slot === 'neighbours') {
      if (neighbours) out += seen.has('neighbours') ? '\\k<n>' : `(?<n>${neighbours})`;
      seen.add('neighbours');
      continue;
    }
    const pattern = slots[part.slot];
    if (pattern === undefined) continue; // renderPrompt fills this slot with ''
    if (!named) out += `(?:${pattern})`;
    else if (seen.has(part.slot)) out += `\\k<${GROUP[part.slot]}>`;
    else out += `(?<${GROUP[part.slot]}>${pattern})`;
    seen.add(part.slot);
  }
  return out;
}

export interface PromptParser {
  parse(messages: ChatMessages): ParsedPrompt | null;
}

/**
 * Compiles the inverse of renderPrompt for `template`. Throws an InputError (naming `file`) for a template
 * whose rendered prompts do not carry what the agent reads.
 */
export function compilePromptParser(
  template: PromptTemplate,
  file = 'template',
  options: { multilineQuestions?: boolean } = {},
): PromptParser {
  checkReadableSlots(template, file);
  const has = (text: string, slot: string) => text.includes(`{{${slot}}}`);
  const lineParts = split(template.neighbour);
  const lineAny = source(lineParts, { index: '\\d+', answer: ANSWER }, false);
  // ssvp shows a merge's review (one line) where the neighbour lines would be.
  const block = `${escapeRegExp(template.no_neighbours)}|${escapeRegExp(MERGE_NOTE)}${ANSWER}|${lineAny}(?:\\n${lineAny})*`;
  const question = options.multilineQuestions ? '[\\s\\S]*?' : '[^\\n]*?';
  const main = { question, previous: ANSWER, t: '\\d+', T: NUMBER, k: '\\d+' };
  const update = new RegExp(`^${source(split(template.update), main, true, block)}$`);
  // At t = 0 renderPrompt writes t = 0 and k = 0, and nothing for the other slots.
  const initial = new RegExp(`^${source(split(template.initial), { question, T: NUMBER, t: '0', k: '0' }, true)}$`);
  // One neighbour line, matched where the previous one ended.
  const line = new RegExp(`${source(lineParts, { index: '\\d+', answer: ANSWER }, true)}(?=\\n|$)`, 'y');
  const showsT = has(template.update, 't');
  const showsK = has(template.update, 'k');

  return {
    parse(messages: ChatMessages): ParsedPrompt | null {
      if (messages.system !== template.system) return null;
      const u = update.exec(messages.user);
      if (u) return parseUpdate(u.groups!, template.no_neighbours, line, showsT, showsK);
      const i = initial.exec(messages.user);
      if (!i) return null;
      return { question: i.groups?.q ?? '', sweep: 0, neighbourAgents: [], neighbourAnswers: [] };
    },
  };
}

/** The slots a served surrogate reads back must be in the template: {{previous}}, {{neighbours}}, {{answer}}. */
function checkReadableSlots(template: PromptTemplate, file: string): void {
  const has = (text: string, slot: string) => text.includes(`{{${slot}}}`);
  if (!has(template.update, 'previous')) {
    throw new InputError(
      file,
      'update',
      'has no {{previous}} slot, so a served surrogate cannot read the previous answer back',
      'add {{previous}} to the update template',
    );
  }
  if (!has(template.update, 'neighbours')) {
    throw new InputError(
      file,
      'update',
      'has no {{neighbours}} slot, so a served surrogate cannot read the neighbours back',
      'add {{neighbours}} to the update template',
    );
  }
  if (!has(template.neighbour, 'answer')) {
    throw new InputError(
      file,
      'neighbour',
      'has no {{answer}} slot, so a served surrogate cannot read the neighbours back',
      'add {{answer}} to the neighbour line',
    );
  }
}

/** The neighbour lines of a block, each matched (sticky `line`) where the previous one ended; null if one does not match. */
function neighbourLines(line: RegExp, text: string): { agents: number[]; answers: string[] } | null {
  const agents: number[] = [];
  const answers: string[] = [];
  let at = 0;
  for (;;) {
    line.lastIndex = at;
    const m = line.exec(text);
    if (!m) return null;
    agents.push(m.groups!.i === undefined ? -1 : Number(m.groups!.i));
    answers.push(m.groups!.a!);
    at = line.lastIndex;
    if (at === text.length) return { agents, answers };
    at++; // the newline between two lines (the lookahead saw it)
  }
}

/** An update prompt's parts from its match: a merge's review, no neighbours, or the neighbour lines. */
function parseUpdate(
  g: Record<string, string | undefined>,
  noNeighbours: string,
  line: RegExp,
  showsT: boolean,
  showsK: boolean,
): ParsedPrompt | null {
  const block = g.n!;
  const k = showsK ? Number(g.k) : undefined;
  let agents: number[] = [];
  let answers: string[] = [];
  if (block.startsWith(MERGE_NOTE)) {
    return {
      question: g.q ?? '',
      sweep: showsT ? Number(g.t) : -1,
      previous: g.p!,
      neighbourAgents: [],
      neighbourAnswers: [],
      merge: block.slice(MERGE_NOTE.length),
    };
  }
  const none = block === noNeighbours && (k === undefined || k === 0);
  if (!none) {
    const read = neighbourLines(line, block);
    if (!read) return null;
    ({ agents, answers } = read);
  }
  if (k !== undefined && k !== answers.length) return null;
  return {
    question: g.q ?? '',
    sweep: showsT ? Number(g.t) : -1,
    previous: g.p!,
    neighbourAgents: agents,
    neighbourAnswers: answers,
  };
}

const parsers = new WeakMap<PromptTemplate, PromptParser>();

/**
 * parse(renderPrompt(template, ctx)) gives back ctx's question, sweep, previous answer and neighbour answers;
 * null when the messages are not a rendering of this template.
 */
export function parseRenderedPrompt(template: PromptTemplate, messages: ChatMessages): ParsedPrompt | null {
  let parser = parsers.get(template);
  if (!parser) {
    parser = compilePromptParser(template);
    parsers.set(template, parser);
  }
  return parser.parse(messages);
}
