import { type ChatMessages, DEFAULT_TEMPLATE, type PromptTemplate, renderPrompt } from '@panta/core';

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

/** The default template's prompt for `question` at sweep 0: no previous answer, no neighbours yet. */
export function firstPrompt(question: string, temperature = 0.7): ChatMessages {
  return renderPrompt(DEFAULT_TEMPLATE, { question, sweep: 0, temperature, neighbourAgents: [], neighbourAnswers: [] });
}

/** A rendered prompt as a chat API's `messages`: [system, user]. */
export function chat(m: ChatMessages): [{ role: 'system'; content: string }, { role: 'user'; content: string }] {
  return [
    { role: 'system', content: m.system },
    { role: 'user', content: m.user },
  ];
}
