import { z } from 'zod';
import { normaliseText } from './answers.js';
import { InputError } from './errors.js';
import { firstIssue, issueToInputError } from './spec/parse.js';
import { IFEVAL_CHECKS } from './team-metrics/ifeval.js';

/** One prompt of a prompt set (a line of datasets/*.jsonl). */
export const promptSchema = z
  .strictObject({
    id: z.string().regex(/^[A-Za-z0-9_.-]+$/, 'letters, digits, ".", "_" and "-" only'),
    question: z.string().min(1),
    /** Short phrases any of which makes an answer correct; may be empty only on a prompt with `instructions`. */
    accepted: z.array(z.string().min(1)),
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
     * Private context per population entry id (a role's injected briefing, right or wrong, as a tool's
     * output would be): the agent holding that entry reads it in its system message, after its persona.
     */
    briefings: z.record(z.string().regex(/^[A-Za-z0-9._-]+$/), z.string().min(1)).optional(),
    /**
     * Checkable assertions of an answer (a study's measures read them): per named fact, the phrases that state it right and
     * those that state it wrong (the injected values); hallucination rate per assertion reads them.
     */
    assertions: z
      .array(z.strictObject({ name: z.string().min(1), gold: z.array(z.string().min(1)).min(1), wrong: z.array(z.string().min(1)).min(1) }))
      .min(1)
      .optional(),
    /**
     * IFEval instructions the answer must follow (its `instruction_id_list` with `kwargs`, one `{id, args}` each):
     * a team's exact match and fact recall on the prompt are IFEval's strict accuracy (ifevalStrict), not a phrase
     * match, and the judge's tag is not read.
     */
    instructions: z
      .array(
        z.strictObject({
          id: z.enum(IFEVAL_CHECKS as [string, ...string[]]),
          args: z.record(z.string(), z.unknown()).optional(),
        }),
      )
      .min(1)
      .optional(),
  })
  .superRefine((p, ctx) => {
    if (p.accepted.length === 0 && !p.instructions) {
      ctx.addIssue({
        code: 'custom',
        path: ['accepted'],
        message: 'no accepted answer',
        params: { fix: 'give at least one accepted answer (only a prompt with IFEval `instructions` may have none)' },
      });
    }
    const bad = p.choices ? p.accepted.find((a) => !p.choices?.includes(a)) : undefined;
    if (bad !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['accepted'],
        message: `"${bad}" is not one of the choices`,
        params: { fix: 'write each accepted answer exactly as one of the choices' },
      });
    }
    // The reference judge calls an answer correct when it holds an accepted phrase and no false one (both:
    // not_known). A false answer inside an accepted one (as whole words, after normalising) would make every
    // answer naming the accepted one not_known.
    const accepted = p.accepted.map((a) => ({ a, n: ` ${normaliseText(a)} ` }));
    p.false_answers.forEach((f, i) => {
      const n = ` ${normaliseText(f)} `;
      const within = accepted.find((x) => x.n.includes(n));
      if (!within) return;
      ctx.addIssue({
        code: 'custom',
        path: ['false_answers', i],
        message: `prompt ${p.id}: the false answer "${f}" ${within.n === n ? 'is also an accepted answer' : `is inside the accepted answer "${within.a}"`}, so every answer naming "${within.a}" would be judged not_known`,
        params: { fix: 'make the accepted and the false answers disjoint (remove it from false_answers, or reword it)' },
      });
    });
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
