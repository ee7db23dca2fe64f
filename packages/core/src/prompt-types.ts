/**
 * The types prompts are made of, in a file that imports nothing: the protocol prompt modules (protocol/*) and
 * the built-in templates use them, and prompt.ts, which renders through those modules, re-exports them.
 */

/** A prompt template (prompt.ts's templateSchema parses one): see templateSchema for its slots. */
export interface PromptTemplate {
  system: string;
  /** The t = 0 message: the agent answers alone. */
  initial: string;
  /** The update message, t >= 1. */
  update: string;
  /** One line per neighbour, joined with newlines into {{neighbours}}. */
  neighbour: string;
  /** Replaces {{neighbours}} when the agent reads no neighbour (isolated protocol, chain head). */
  no_neighbours: string;
}

export interface ChatMessages {
  system: string;
  user: string;
}

/** One timestamped item of an agent's context: what it (or a neighbour) said, and in which round. */
export interface ContextItem {
  round: number;
  /** -1: the agent itself. */
  agent: number;
  text: string;
}

/** What one agent sees in one event (or, with `kind`, what a protocol call sees). */
export interface PromptContext {
  /** Default agent. merge, drift-judge and moderator are protocol calls with their own fixed prompts. */
  kind?: 'agent' | 'merge' | 'drift-judge' | 'moderator' | 'summary' | 'context-merge';
  question: string;
  sweep: number;
  temperature: number;
  /** The agent's own previous answer; undefined at t = 0. */
  previous?: string;
  /** Neighbours in prompt order (agent indices), and their live answers in the same order. */
  neighbourAgents: ArrayLike<number>;
  neighbourAnswers: readonly string[];
  /** Hidden persona or belief text: joins the system message. */
  persona?: string;
  /** The belief alone (a simulated agent leans to it). */
  belief?: string;
  /** belief-board: the reply is JSON with board entries; neighbourAnswers hold the neighbours' entries. */
  board?: boolean;
  /** ssvp above tau: the merge call's review, shown in place of the neighbours' answers. */
  merge?: string;
  /** summary and context-merge (SSVP as published): the agent's timestamped context, and the merge's incoming summary. */
  context?: readonly ContextItem[];
  incoming?: { agent: number; round: number; summary: string };
  /** drift-policy: the moderator's message for this sweep. */
  moderator?: string;
  /** drift-judge and moderator: the majority answer after the previous sweep and after this one. */
  before?: string;
  after?: string;
}
