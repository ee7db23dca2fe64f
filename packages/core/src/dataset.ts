import { z } from 'zod';
import { InputError } from './errors.js';
import { firstIssue, issueToInputError } from './spec/parse.js';

/** One prompt of a prompt set (a line of datasets/*.jsonl). */
export const promptSchema = z.strictObject({
  id: z.string().regex(/^[A-Za-z0-9_.-]+$/, 'letters, digits, ".", "_" and "-" only'),
  question: z.string().min(1),
  /** Short phrases any of which makes an answer correct. */
  accepted: z.array(z.string().min(1)).min(1),
  /** Plausible wrong answers that models give; each makes an answer hallucinated. */
  false_answers: z.array(z.string().min(1)).default([]),
  false_premise: z.boolean(),
  source: z.string().default(''),
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
