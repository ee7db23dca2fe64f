import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { queryRows, verifyCorpus } from '@panta/corpus';

/** A sweep spec against an OpenAI-compatible server: ring n 8, two prompts, two sweeps (48 answers). */
export function adversarialSpec(name: string, dataset: string, url: string, judgeUrl?: string, maxRetries = 1, sweeps = 2): string {
  const backend = `{kind: openai, base_url: "${url}", model: adversarial-1, server: vllm, max_retries: ${maxRetries}, timeout_ms: 20000}`;
  return `name: ${name}
dataset: ${dataset}
prompts: [fq367, fq117]
geometries: [ring]
sizes: [8]
temperatures: [0.7]
sweeps: ${sweeps}
seed: 5
backend: ${backend}
${judgeUrl ? `judge: {kind: llm, backend: {kind: openai, base_url: "${judgeUrl}", model: adversarial-1, server: vllm, max_retries: ${maxRetries}}}` : ''}
`;
}

export interface OrderRow {
  run_id: string;
  prompt_id: string;
  sweep: number;
  magnetisation: number | null;
  cohesion: number | null;
  rho: number | null;
  delta_rho: number | null;
  n_correct: number;
  n_hallucinated: number;
  n_not_known: number;
  n_judge_failure: number;
}

export interface AgentRow {
  prompt_id: string;
  response: string;
  reply_status: string;
  tag: string;
}

/**
 * The checks every adversarial sweep must pass: `panta verify` finds it complete and consistent, every
 * answer row is there (48 = 2 runs x 8 agents x 3 snapshots), and order_params.parquet exists, read back by
 * DuckDB. Returns its rows (with the run's prompt) and the answers, for the caller's own checks. The corpus is
 * adversarialSpec's two runs of n agents (8 unless its sizes were changed) over `sweeps` sweeps (2 unless given).
 */
export async function expectSoundCorpus(out: string, n = 8, sweeps = 2): Promise<{ order: OrderRow[]; answers: AgentRow[] }> {
  const report = await verifyCorpus(out);
  expect(report.problems).toEqual([]);
  expect(report.ok).toBe(true);
  expect(existsSync(join(out, 'order_params.parquet'))).toBe(true);
  const answers = (await queryRows(
    `SELECT prompt_id, response, reply_status, tag FROM read_parquet('${out}/events/*.parquet') WHERE role = 'agent' ORDER BY run_id, event`,
  )) as unknown as AgentRow[];
  expect(answers).toHaveLength(2 * (sweeps + 1) * n);
  const order = (await queryRows(
    `SELECT o.*, r.prompt_id FROM read_parquet('${out}/order_params.parquet') o JOIN read_parquet('${out}/runs.parquet') r USING (run_id) ORDER BY o.run_id, o.sweep, o.encoder`,
  )) as unknown as OrderRow[];
  // Snapshots t = 0 .. sweeps of both runs, one encoder.
  expect(order).toHaveLength(2 * (sweeps + 1));
  for (const o of order) expect(o.n_correct + o.n_hallucinated + o.n_not_known + o.n_judge_failure).toBe(n);
  return { order, answers };
}

/** Order parameters where no answer is usable: rho and delta rho null (never NaN), the spins still defined. */
export function expectNoUsableTags(order: OrderRow[]): void {
  for (const o of order) {
    expect(o.rho).toBeNull();
    expect(o.delta_rho).toBeNull();
    expect(Number.isFinite(o.magnetisation)).toBe(true);
    expect(Number.isFinite(o.cohesion)).toBe(true);
  }
}

/** A unanimous population: m = q = 1 at every snapshot. */
export function expectUnanimous(order: OrderRow[]): void {
  for (const o of order) {
    expect(Math.abs(o.magnetisation! - 1), `m of ${o.run_id} t=${o.sweep}`).toBeLessThanOrEqual(1e-9);
    expect(Math.abs(o.cohesion! - 1), `q of ${o.run_id} t=${o.sweep}`).toBeLessThanOrEqual(1e-9);
  }
}
