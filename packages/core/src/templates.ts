import type { PromptTemplate } from './prompt-types.js';

/**
 * The built-in agent templates, selectable by name from a spec (`template: panta-v1`); any other value is
 * a template file's path.
 */

/**
 * Rheon's agent template (paper, A.2): its axes are the time step t, the temperature T and the neighbour
 * count k; the initial answer has no peer context (k = 0), an update shows the agent's own previous answer
 * and its k neighbours' answers. Nothing else is asked of the agent: no length (answers are fixed at
 * max_tokens by the sampler, A.3), no hint about false premises or admitting ignorance, which would prime
 * the factual outcome the sweep measures. Shared text first (system, question) for the prefix cache.
 */
export const RHEON_TEMPLATE: PromptTemplate = {
  system: 'You are one of a population of agents answering the same question.',
  initial: 'Question: {{question}}\nt = {{t}}, T = {{T}}, k = {{k}}\nYour answer:',
  update:
    'Question: {{question}}\n' +
    't = {{t}}, T = {{T}}, k = {{k}}\n' +
    'Your previous answer: {{previous}}\n' +
    "Your {{k}} neighbours' answers:\n{{neighbours}}\n" +
    'Your answer:',
  neighbour: '- Agent {{index}}: {{answer}}',
  no_neighbours: '(none)',
};

/**
 * A.2's content in the order a prefix cache can reuse (vLLM's automatic prefix caching serves the longest
 * run of whole blocks a new prompt shares with a cached one): what consecutive events of a run share first
 * (the question, T, k and the neighbours' answers, which on a mean field are most of the prompt), what is the
 * agent's own last (t and its previous answer). The same facts as `rheon-a2`, each once; only the order of
 * the lines differs. Pair it with `neighbour_order: per-run` so that the neighbour lines themselves keep
 * their places from one event to the next.
 */
export const RHEON_PREFIX_TEMPLATE: PromptTemplate = {
  system: RHEON_TEMPLATE.system,
  initial: 'Question: {{question}}\nT = {{T}}, k = {{k}}\nt = {{t}}\nYour answer:',
  update:
    'Question: {{question}}\n' +
    'T = {{T}}, k = {{k}}\n' +
    "Your {{k}} neighbours' answers:\n{{neighbours}}\n" +
    't = {{t}}\n' +
    'Your previous answer: {{previous}}\n' +
    'Your answer:',
  neighbour: RHEON_TEMPLATE.neighbour,
  no_neighbours: RHEON_TEMPLATE.no_neighbours,
};

/**
 * Panta's first default (until the A.2 default, rheon-a2): one short sentence, a false-premise hint and a way out ("say that
 * you do not know"). Kept by name so that corpora made with it resume and compare.
 */
export const PANTA_V1_TEMPLATE: PromptTemplate = {
  system:
    'You are one member of a group of agents answering the same question. Answer in one short sentence. ' +
    'If the question rests on a false premise, say so. If you do not know, say that you do not know.',
  initial: 'Question: {{question}}\nYour answer:',
  update:
    'Question: {{question}}\n' +
    'Round {{t}}. Your previous answer: {{previous}}\n' +
    'Answers of your {{k}} neighbours:\n{{neighbours}}\n' +
    'Considering them, give your answer again in one short sentence.\nYour answer:',
  neighbour: '- Agent {{index}}: {{answer}}',
  no_neighbours: '(none)',
};

export const BUILTIN_TEMPLATES: Readonly<Record<string, PromptTemplate>> = {
  'rheon-a2': RHEON_TEMPLATE,
  'panta-v1': PANTA_V1_TEMPLATE,
  'rheon-a2-prefix': RHEON_PREFIX_TEMPLATE,
};

/** The template a spec without `template` gets. */
export const DEFAULT_TEMPLATE_NAME = 'rheon-a2';

/** The built-in template of that name, or undefined when the value is not a built-in name (a file path). */
export function builtinTemplate(ref: string): PromptTemplate | undefined {
  return Object.hasOwn(BUILTIN_TEMPLATES, ref) ? BUILTIN_TEMPLATES[ref] : undefined;
}
