import { z } from 'zod';
import { InputError } from './errors.js';
import { rngFrom } from './rng.js';
import type { PopulationSpec } from './spec/schema.js';

/** One persona or hidden belief: what an agent is told privately (neighbours never see it as such). */
export const populationEntrySchema = z
  .strictObject({
    id: z.string().regex(/^[A-Za-z0-9._-]+$/, 'letters, digits, ".", "_" and "-" only'),
    /** Who the agent is: joins its system message. */
    persona: z.string().min(1).optional(),
    /** What it privately believes the answer is: joins its system message as a hidden belief. */
    belief: z.string().min(1).optional(),
  })
  .refine((e) => e.persona !== undefined || e.belief !== undefined, { message: 'needs a persona or a belief' });

export type PopulationEntry = z.infer<typeof populationEntrySchema>;

/** A heterogeneous population: the entries and the seeded rule that deals them to agents. */
export interface Population extends Pick<PopulationSpec, 'assign' | 'fraction'> {
  entries: PopulationEntry[];
}

export function parsePopulation(text: string, file: string): PopulationEntry[] {
  const entries: PopulationEntry[] = [];
  const ids = new Set<string>();
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw new InputError(
        file,
        `line ${i + 1}`,
        'is not JSON',
        'write one JSON object per line: {"id": "...", "persona": "..."} or {"id": "...", "belief": "..."}',
      );
    }
    const parsed = populationEntrySchema.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new InputError(
        file,
        `line ${i + 1}${issue.path.length ? `.${issue.path.join('.')}` : ''}`,
        issue.message,
        'give each line an id and a persona or a belief',
      );
    }
    if (ids.has(parsed.data.id))
      throw new InputError(file, `line ${i + 1}.id`, `id "${parsed.data.id}" is used twice`, 'give every entry its own id');
    ids.add(parsed.data.id);
    entries.push(parsed.data);
  });
  if (entries.length === 0) throw new InputError(file, '', 'holds no entry', 'add at least one line {"id": "...", "persona": "..."}');
  return entries;
}

/**
 * Which entry each agent of a run gets (-1: none), a pure function of the run seed: `same` gives every agent
 * the first entry; `distinct` deals the entries round-robin over a seeded shuffle of the agents; `fraction`
 * does the same for the first round(fraction * N) agents of the shuffle only.
 */
export function assignPopulation(population: Population, n: number, runSeed: number): Int32Array {
  const out = new Int32Array(n).fill(-1);
  if (population.assign === 'same') return out.fill(0);
  const order = Int32Array.from({ length: n }, (_, i) => i);
  const rng = rngFrom(runSeed, 'population');
  for (let i = n - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [order[i], order[j]] = [order[j], order[i]];
  }
  const count = population.assign === 'distinct' ? n : Math.round(population.fraction * n);
  for (let r = 0; r < count; r++) out[order[r]] = r % population.entries.length;
  return out;
}
