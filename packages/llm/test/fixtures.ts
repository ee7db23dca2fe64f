import type { PromptTemplate } from '@panta/core';

/** Repeats the question, shows every slot, a two-line neighbour entry, regex metacharacters, empty no_neighbours. */
export const CUSTOM_TEMPLATE: PromptTemplate = {
  system: 'System (v2) [x]*? $1 \\d: answer briefly. {{T}} is shown raw here.',
  initial: 'Q: {{question}} (T={{T}}, t={{t}}, k={{k}})\nA:',
  update: '[t={{t}} T={{T}}] Q: {{question}}\nYou said: "{{previous}}".\nPeers ({{k}}):\n{{neighbours}}\nAgain, Q: {{question}}\nA:',
  neighbour: '* peer #{{index}} wrote:\n  > {{answer}} <',
  no_neighbours: '',
};

/** Runs task(0..n-1) with at most `concurrency` at once; results in index order. */
export async function pool<T>(n: number, concurrency: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array(n);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        const i = next++;
        out[i] = await task(i);
      }
    }),
  );
  return out;
}
