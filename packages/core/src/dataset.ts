import { z } from 'zod';
import { InputError } from './errors.js';
import { firstIssue, issueToInputError } from './spec/parse.js';

/** One prompt of a prompt set (a line of datasets/*.jsonl). */
export const promptSchema = z
  .strictObject({
    id: z.string().regex(/^[A-Za-z0-9_.-]+$/, 'letters, digits, ".", "_" and "-" only'),
    question: z.string().min(1),
    /** Short phrases any of which makes an answer correct. */
    accepted: z.array(z.string().min(1)).min(1),
    /** Plausible wrong answers that models give; each makes an answer hallucinated. */
    false_answers: z.array(z.string().min(1)).default([]),
    false_premise: z.boolean(),
    source: z.string().default(''),
    /**
     * Gold facts of a multi-fact answer (FanOutQA-style): fact recall is the share of them a reply contains,
     * exact match needs all of them. Absent for single-answer prompts.
     */
    facts: z.array(z.string().min(1)).min(1).optional(),
    /** The options of a multiple-choice or claim-verification prompt; every accepted answer is one of them. */
    choices: z.array(z.string().min(1)).min(2).optional(),
    /**
     * Private context per population entry id (a role's injected briefing, e.g. the travel scenarios'
     * mismatches): the agent holding that entry reads it in its system message, after its persona.
     */
    briefings: z.record(z.string().regex(/^[A-Za-z0-9._-]+$/), z.string().min(1)).optional(),
    /**
     * Checkable assertions of an answer (docs/travel.md): per named fact, the phrases that state it right and
     * those that state it wrong (the injected values); hallucination rate per assertion reads them.
     */
    assertions: z
      .array(z.strictObject({ name: z.string().min(1), gold: z.array(z.string().min(1)).min(1), wrong: z.array(z.string().min(1)).min(1) }))
      .min(1)
      .optional(),
  })
  .superRefine((p, ctx) => {
    const bad = p.choices ? p.accepted.find((a) => !p.choices?.includes(a)) : undefined;
    if (bad !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['accepted'],
        message: `"${bad}" is not one of the choices`,
        params: { fix: 'write each accepted answer exactly as one of the choices' },
      });
    }
  });

export type Prompt = z.infer<typeof promptSchema>;

/** Parses a JSON-lines prompt set. Blank lines are allowed; ids must be unique. */
export function parseDataset(text: string, file: string): Prompt[] {
  const prompts: Prompt[] = [];
  const seen = new Set<string>();
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (!line) continue;
    const where = `line ${i + 1}`;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (e) {
      throw new InputError(file, where, `not valid JSON (${(e as Error).message})`, 'write one JSON object per line');
    }
    const parsed = promptSchema.safeParse(value);
    if (!parsed.success) {
      const err = issueToInputError(file, firstIssue(parsed.error.issues), value);
      throw new InputError(file, `${where}: ${err.field}`, err.problem, err.fix);
    }
    if (seen.has(parsed.data.id)) {
      throw new InputError(file, `${where}: id`, `duplicate id "${parsed.data.id}"`, 'give every prompt its own id');
    }
    seen.add(parsed.data.id);
    prompts.push(parsed.data);
  }
  if (prompts.length === 0) throw new InputError(file, '', 'the prompt set is empty', 'add one JSON object per line');
  return prompts;
}
