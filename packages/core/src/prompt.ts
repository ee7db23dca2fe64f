import { parse } from 'yaml';
import { z } from 'zod';
import { InputError } from './errors.js';
import { CHARS_PER_TOKEN } from './names.js';
import { BOARD_INSTRUCTION, mergeNote, renderMerge } from './protocol/prompts.js';
import { protocolPrompt } from './protocol/registry.js';
import type { ChatMessages, PromptContext, PromptTemplate } from './prompt-types.js';
import { issueToInputError } from './spec/parse.js';
import { RHEON_TEMPLATE } from './templates.js';

/**
 * A prompt template: shared text first (system, then the question), so that a server's prefix cache serves
 * every agent of a run; then the agent's own previous answer and its neighbours' answers in prompt order.
 * Slots: {{question}} {{previous}} {{neighbours}} {{t}} {{T}} {{k}}, and in `neighbour` {{index}} {{answer}}.
 */
export const templateSchema = z.strictObject({
  system: z.string().min(1),
  /** The t = 0 message: the agent answers alone. */
  initial: z.string().min(1),
  /** The update message, t >= 1. */
  update: z.string().min(1),
  /** One line per neighbour, joined with newlines into {{neighbours}}. */
  neighbour: z.string().min(1),
  /** Replaces {{neighbours}} when the agent reads no neighbour (isolated protocol, chain head). */
  no_neighbours: z.string().default('(none)'),
});

export type { ChatMessages, ContextItem, PromptContext, PromptTemplate } from './prompt-types.js';

// The schema's output is the PromptTemplate interface (prompt-types.ts), which imports nothing.
templateSchema satisfies z.ZodType<PromptTemplate>;

/** The template of a spec that names none: Rheon's (A.2); see templates.ts for the built-in ones. */
export const DEFAULT_TEMPLATE: PromptTemplate = RHEON_TEMPLATE;

const SLOTS = /\{\{(question|previous|neighbours|t|T|k|index|answer)\}\}/g;

export function parseTemplate(text: string, file: string): PromptTemplate {
  let value: unknown;
  try {
    value = parse(text);
  } catch (e) {
    throw new InputError(file, '', `malformed YAML (${(e as Error).message.split('\n')[0]})`, 'fix the YAML syntax');
  }
  const parsed = templateSchema.safeParse(value);
  if (!parsed.success) throw issueToInputError(file, parsed.error.issues[0], value);
  const unknown = /\{\{(?!(question|previous|neighbours|t|T|k|index|answer)\}\})[^}]*\}\}/.exec(Object.values(parsed.data).join('\n'));
  if (unknown) {
    throw new InputError(
      file,
      '',
      `unknown slot ${unknown[0]}`,
      'use {{question}} {{previous}} {{neighbours}} {{t}} {{T}} {{k}} {{index}} {{answer}}',
    );
  }
  return parsed.data;
}

/** A context with nothing beyond the plain agent template: it renders (and measures) on the fast path. */
function plain(ctx: PromptContext): boolean {
  return (ctx.kind ?? 'agent') === 'agent' && !ctx.persona && !ctx.board && ctx.merge === undefined && !ctx.moderator;
}

/** Everything beyond the plain template: protocol calls, personas, boards, merges, moderator messages. */
function renderExtended(template: PromptTemplate, ctx: PromptContext): ChatMessages {
  // A protocol's own call, as its registry entry renders it.
  const own = ctx.kind === undefined || ctx.kind === 'agent' ? undefined : protocolPrompt(ctx.kind);
  if (own) return own(template, ctx);
  switch (ctx.kind) {
    // The review call of the answer-gated ssvp (corpora before SSVP as published; the surrogate still reads it).
    case 'merge':
      return renderMerge(ctx.question, ctx.previous ?? '', ctx.neighbourAnswers);
    default: {
      const base = renderPlain(
        template,
        ctx.merge === undefined ? ctx : { ...ctx, neighbourAnswers: [] },
        ctx.merge === undefined ? undefined : mergeNote(ctx.merge),
      );
      let system = base.system;
      if (ctx.board) system += `\n${BOARD_INSTRUCTION}`;
      if (ctx.persona) system += `\n${ctx.persona}`;
      return { system, user: ctx.moderator ? `Moderator: ${ctx.moderator}\n${base.user}` : base.user };
    }
  }
}

/** A template split once into literal text and slot names, so that filling it is plain concatenation. */
type Compiled = (string | { slot: string })[];
const compiled = new Map<string, Compiled>();

function compile(template: string): Compiled {
  let parts = compiled.get(template);
  if (!parts) {
    parts = [];
    let last = 0;
    for (const m of template.matchAll(SLOTS)) {
      parts.push(template.slice(last, m.index), { slot: m[1] });
      last = m.index + m[0].length;
    }
    parts.push(template.slice(last));
    if (compiled.size > 64) compiled.clear();
    compiled.set(template, parts);
  }
  return parts;
}

function fill(template: string, slots: Record<string, string>): string {
  let out = '';
  for (const part of compile(template)) out += typeof part === 'string' ? part : (slots[part.slot] ?? '');
  return out;
}

export function renderPrompt(template: PromptTemplate, ctx: PromptContext): ChatMessages {
  return plain(ctx) ? renderPlain(template, ctx) : renderExtended(template, ctx);
}

/** The agent template; `block` (a merge's review) replaces the neighbour lines when given. */
function renderPlain(template: PromptTemplate, ctx: PromptContext, block?: string): ChatMessages {
  if (ctx.previous === undefined) {
    return {
      system: template.system,
      user: fill(template.initial, { question: ctx.question, t: '0', T: String(ctx.temperature), k: '0' }),
    };
  }
  const count = ctx.neighbourAnswers.length;
  let lines = block ?? template.no_neighbours;
  if (count > 0) {
    // Mean-field prompts have thousands of lines: fill the line template by plain concatenation.
    const parts = compile(template.neighbour);
    lines = '';
    for (let i = 0; i < count; i++) {
      if (i > 0) lines += '\n';
      for (const part of parts) {
        lines +=
          typeof part === 'string'
            ? part
            : part.slot === 'index'
              ? ctx.neighbourAgents[i]
              : part.slot === 'answer'
                ? ctx.neighbourAnswers[i]
                : '';
      }
    }
  }
  return {
    system: template.system,
    user: fill(template.update, {
      question: ctx.question,
      previous: ctx.previous,
      neighbours: lines,
      t: String(ctx.sweep),
      T: String(ctx.temperature),
      k: String(block !== undefined ? ctx.neighbourAgents.length : count),
    }),
  };
}

function slotLength(parts: Compiled, slots: Record<string, string>): number {
  let n = 0;
  for (const part of parts) n += typeof part === 'string' ? part.length : (slots[part.slot]?.length ?? 0);
  return n;
}

/**
 * The lengths of what renderPrompt would produce, without building the strings: a mean-field prompt holds
 * thousands of answers, and a backend that only counts (the surrogate) need not pay for the text.
 */
export function promptLength(template: PromptTemplate, ctx: PromptContext): { system: number; user: number } {
  if (!plain(ctx)) {
    const m = renderExtended(template, ctx);
    return { system: m.system.length, user: m.user.length };
  }
  if (ctx.previous === undefined) {
    return {
      system: template.system.length,
      user: slotLength(compile(template.initial), { question: ctx.question, t: '0', T: String(ctx.temperature), k: '0' }),
    };
  }
  const count = ctx.neighbourAnswers.length;
  let lines = template.no_neighbours.length;
  if (count > 0) {
    // A mean field's prompt quotes hundreds of answers: one pass over them, the line's shape counted once.
    const line = lineShape(template.neighbour);
    lines = count - 1 + count * line.fixed;
    if (line.index > 0) for (let i = 0; i < count; i++) lines += line.index * digits(ctx.neighbourAgents[i]);
    if (line.answer > 0) for (let i = 0; i < count; i++) lines += line.answer * ctx.neighbourAnswers[i].length;
  }
  // The update template's slots, measured in place (this runs once per event: no slot object, no strings).
  let user = 0;
  for (const part of compile(template.update)) {
    if (typeof part === 'string') user += part.length;
    else if (part.slot === 'question') user += ctx.question.length;
    else if (part.slot === 'previous') user += ctx.previous.length;
    else if (part.slot === 'neighbours') user += lines;
    else if (part.slot === 't') user += digits(ctx.sweep);
    else if (part.slot === 'T') user += String(ctx.temperature).length;
    else if (part.slot === 'k') user += digits(count);
  }
  return { system: template.system.length, user };
}

/** A neighbour line's fixed characters and how many index and answer slots it holds (other slots render empty). */
function lineShape(template: string): { fixed: number; index: number; answer: number } {
  let shape = shapes.get(template);
  if (!shape) {
    shape = { fixed: 0, index: 0, answer: 0 };
    for (const part of compile(template)) {
      if (typeof part === 'string') shape.fixed += part.length;
      else if (part.slot === 'index') shape.index++;
      else if (part.slot === 'answer') shape.answer++;
    }
    if (shapes.size > 64) shapes.clear();
    shapes.set(template, shape);
  }
  return shape;
}
const shapes = new Map<string, { fixed: number; index: number; answer: number }>();

/** String(n).length for a non-negative integer (agent indices, sweeps, counts). */
function digits(n: number): number {
  let d = 1;
  for (let x = n; x >= 10; x = Math.floor(x / 10)) d++;
  return d;
}

/** A rough token count (about four characters a token) for budgets and for backends that report none. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}
