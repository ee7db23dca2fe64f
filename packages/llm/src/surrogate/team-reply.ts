import { EXTRACT_LINE, type ChatMessages, type Prompt } from '@panta/core';
import type { SurrogateAgent } from './agent.js';
import type { ScenarioModel } from './scenario.js';
import { lineAfter, readTeamCall, type TeamView } from './team-read.js';

/**
 * The surrogate's reply to a team call (docs/teams.md), or null when the messages are not one. It reads
 * the call from its text, in process as in `panta serve-surrogate`, so both answer the same; the reply is
 * a pure function of (messages, seed, temperature, max_tokens). The first scenario that takes the call
 * answers it; else the neutral agent does (neutralTeamReply).
 */
export function teamReply(
  messages: ChatMessages,
  call: { seed: number; temperature: number; maxTokens: number },
  prompts: readonly Prompt[],
  scenarios: readonly ScenarioModel[],
  agentOf: (prompt: Prompt) => SurrogateAgent,
): string | null {
  const view = readTeamCall(messages, prompts);
  if (!view) return null;
  for (const s of scenarios) {
    const text = s.team?.(view, call.seed, call.maxTokens, messages) ?? null;
    if (text !== null) return text;
  }
  return neutralTeamReply(view, agentOf(view.prompt), call.seed, call.temperature, messages);
}

const PROPOSAL = /^(\d+)\. (.*)$/;
const SOLUTION = /^Solution after turn \d+: /;

/**
 * A team call answered with no task knowledge, in the forms the schedules read: a vote names a proposal, a
 * drift judge says DRIFT when the two solutions it compares express different options, a persona list
 * numbers plain participants; any other member answers the task by the Potts rule, reading the answers the
 * call shows (each line that expresses an option) and its hidden belief.
 */
export function neutralTeamReply(view: TeamView, agent: SurrogateAgent, seed: number, temperature: number, messages: ChatMessages): string {
  switch (view.role) {
    case 'persona-gen': {
      const n = Number(/Name (\d+) different experts/.exec(messages.user)?.[1] ?? 3);
      return Array.from({ length: n }, (_, i) => `${i + 1}. participant ${i + 1}`).join('\n');
    }
    case 'vote': {
      const proposals = view.lines.map((l) => PROPOSAL.exec(l)).filter((m): m is RegExpExecArray => m !== null);
      if (proposals.length === 0) return 'No proposal to vote for.';
      const { option } = agent.reply(
        seed,
        temperature,
        proposals[0][2],
        proposals.slice(1).map((m) => m[2]),
        view.belief,
      );
      const chosen = proposals.find((m) => agent.optionOf(m[2]) === option) ?? proposals[0];
      return chosen[1];
    }
    case 'drift-judge': {
      const solutions = view.lines.filter((l) => SOLUTION.test(l)).map((l) => l.replace(SOLUTION, ''));
      const [before = '', after = ''] = solutions;
      return agent.optionOf(before) === agent.optionOf(after)
        ? 'NO DRIFT: the solution kept its answer.'
        : `DRIFT: the solution changed its answer. Earlier solution: ${before}`;
    }
    case 'solution':
      // The extraction of a one-line contribution is the contribution itself.
      return lineAfter(view.lines, EXTRACT_LINE) ?? '';
    case 'feedback': {
      const earlier = /Earlier solution: (.*)$/.exec(lineAfter(view.lines, /^A judge found that turn \d+ drifted: /) ?? '')?.[1];
      return `Feedback: the last turn changed the answer.${earlier ? ` Return to: ${earlier}` : ''}`;
    }
    default: {
      const reads = view.lines.filter((l) => agent.optionOf(l) !== agent.notKnownOption);
      const [previous, ...neighbours] = reads;
      return agent.reply(seed, temperature, previous, neighbours, view.belief).text;
    }
  }
}
