/** One call of a team run (an agent turn, a vote, a judge verdict, a moderator message, ...). */
export interface TeamCall {
  arm: string;
  run_id: string;
  prompt_tokens: number;
  completion_tokens: number;
}

export interface ArmCost {
  arm: string;
  runs: number;
  calls: number;
  prompt_tokens: number;
  completion_tokens: number;
  /** Means per run (every arm listed has at least one run). */
  calls_per_run: number;
  tokens_per_run: number;
}

/** Calls and tokens per arm, arms in first-seen order: what each mitigation costs over the plain team. */
export function costPerArm(calls: readonly TeamCall[]): ArmCost[] {
  const byArm = new Map<string, { runs: Set<string>; calls: number; prompt: number; completion: number }>();
  for (const c of calls) {
    let a = byArm.get(c.arm);
    if (!a) {
      a = { runs: new Set(), calls: 0, prompt: 0, completion: 0 };
      byArm.set(c.arm, a);
    }
    a.runs.add(c.run_id);
    a.calls++;
    a.prompt += c.prompt_tokens;
    a.completion += c.completion_tokens;
  }
  return [...byArm].map(([arm, a]) => ({
    arm,
    runs: a.runs.size,
    calls: a.calls,
    prompt_tokens: a.prompt,
    completion_tokens: a.completion,
    calls_per_run: a.calls / a.runs.size,
    tokens_per_run: (a.prompt + a.completion) / a.runs.size,
  }));
}
