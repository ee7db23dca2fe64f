import { InputError, type Prompt, type SweepSpec } from '@panta/core';
import type { Encoder } from '@panta/embed';
import { heatBathStates } from '@panta/llm';

/** The surrogate's heat-bath scenarios (llm's scenarios/heat-bath), and whether each plays Ising spins. */
const HEAT_BATH: Record<string, boolean> = { ising: true, 'ising-meanfield': true, potts: false, 'potts-meanfield': false };

/**
 * A heat-bath spin sweep measures m from the embeddings of its q state strings: two states with one vector
 * would make one spin of two (m silently wrong), so each encoder must tell every prompt's states apart.
 */
export async function checkHeatBathStates(
  spec: SweepSpec,
  prompts: readonly Prompt[],
  encoders: readonly Encoder[],
  file: string,
): Promise<void> {
  const scenario = spec.backend.kind === 'surrogate' ? spec.backend.scenario : undefined;
  if (scenario === undefined || !(scenario in HEAT_BATH)) return;
  for (const prompt of prompts) {
    const states = heatBathStates(prompt, { ising: HEAT_BATH[scenario]!, meanField: false });
    for (const [i, encoder] of encoders.entries()) {
      const vectors = await encoder.encode(states);
      const seen = new Map<string, string>();
      states.forEach((text, s) => {
        const key = Array.from(vectors[s]!).join(',');
        const other = seen.get(key);
        if (other !== undefined)
          throw new InputError(
            file,
            `encoders[${i}]`,
            `encoder ${encoder.name} gives the states "${other}" and "${text}" of prompt ${prompt.id} one vector, so the ${scenario} spins cannot be told apart`,
            encoder.model.startsWith('hashing')
              ? 'give the hashing encoder more dimensions (64 or more; default 384)'
              : 'use another encoder',
          );
        seen.set(key, text);
      });
    }
  }
}
