import { existsSync, readFileSync, statSync } from 'node:fs';
import {
  CHARS_PER_TOKEN,
  campaignCost,
  type CampaignCost,
  GPU_COST_MODELS,
  type GpuCostModel,
  type GpuPlan,
  gpuPlan,
  InputError,
  maximalGrids,
  maxTemperatureCount,
  parseGpuCostModel,
  planSweep,
  startGrid,
  type SweepSpec,
} from '@panta/core';
import { loadSweep } from '@panta/engine';
import { EXIT, reportError } from '../errors.js';
import { formatTable } from '../table.js';

/**
 * `panta plan SPEC`: what a sweep will cost before anything runs. The spec is loaded and checked as
 * `panta run` does (a bad spec is one line, exit 2), nothing is written.
 */
export function planCommand(
  spec: string,
  opts: { callsPerS?: number; json?: boolean; gpu?: string; judgeGpu?: string; gpus?: number },
): number {
  try {
    // The cost models first: a bad --gpu is the flag's fault whatever the spec holds.
    const model = opts.gpu !== undefined ? costModel(opts.gpu, '--gpu') : undefined;
    const judgeModel = opts.judgeGpu !== undefined ? costModel(opts.judgeGpu, '--judge-gpu') : undefined;
    if (!model && (judgeModel || opts.gpus !== undefined))
      throw new InputError(
        opts.gpus !== undefined ? '--gpus' : '--judge-gpu',
        '',
        'prices GPU time only with --gpu',
        'add --gpu NAME_OR_FILE',
      );
    const sweep = loadSweep(spec);
    // Adaptive temperatures: priced at the most runs the rounds can add (start + add x rounds temperatures per group).
    const runs = Array.isArray(sweep.spec.temperatures)
      ? sweep.runs
      : planSweep(sweep.spec, sweep.prompts, spec, sweep.edgeLists, sweep.armFiles, maximalGrids(sweep.spec, sweep.runs));
    const input = { spec: sweep.spec, runs, template: sweep.template, edgeLists: sweep.edgeLists };
    const cost = campaignCost({ ...input, ...(opts.callsPerS !== undefined ? { callsPerSecond: opts.callsPerS } : {}) });
    const gpu = model
      ? gpuPlan({ ...input, model, ...(judgeModel ? { judgeModel } : {}), ...(opts.gpus !== undefined ? { gpus: opts.gpus } : {}) })
      : undefined;
    const judged = sweep.spec.judge.kind === 'llm';
    const adaptive = Array.isArray(sweep.spec.temperatures)
      ? {}
      : { adaptive: { ...sweep.spec.temperatures.adaptive, max_temperatures: maxTemperatureCount(sweep.spec.temperatures) } };
    if (opts.json) process.stdout.write(`${JSON.stringify(gpu ? { ...cost, ...gpu, ...adaptive } : { ...cost, ...adaptive }, null, 2)}\n`);
    else
      process.stdout.write(
        adaptiveText(sweep.spec) + planText(sweep.spec.name, sweep.spec.sweeps, cost) + (gpu ? gpuText(gpu, judged) : ''),
      );
    return EXIT.ok;
  } catch (error) {
    return reportError(error);
  }
}

/** `--gpu NAME_OR_FILE`: a built-in cost model's name, else a JSON file of one (core's parseGpuCostModel). */
function costModel(value: string, flag: string): GpuCostModel {
  if (Object.hasOwn(GPU_COST_MODELS, value)) return parseGpuCostModel(value, flag);
  const names = Object.keys(GPU_COST_MODELS).join(', ');
  if (!existsSync(value))
    throw new InputError(
      flag,
      '',
      `"${value}" is neither a built-in cost model nor a file`,
      `use one of ${names}, or the path of a JSON cost model`,
    );
  if (statSync(value).isDirectory()) throw new InputError(flag, '', `${value} is a folder, not a file`, 'give a JSON cost model file');
  return parseGpuCostModel(readFileSync(value, 'utf8'), value);
}

const int = (x: number) => Math.round(x).toLocaleString('en-US');

/** Hours with the precision they carry: 1,234 h, 12.3 h, 0.25 h. */
const hours = (h: number) => (h >= 100 ? int(h) : h >= 10 ? h.toFixed(1) : h.toFixed(2));

function gpuText(g: GpuPlan, judged: boolean): string {
  const out: string[] = [''];
  const same = g.judge_model === g.model;
  out.push(
    `GPU time under ${g.model}${judged ? `, the judge under ${g.judge_model}` : ''} (prefix cache between consecutive events of a run; neighbour order ${g.neighbour_order}):`,
  );
  out.push(
    formatTable(
      [
        'geometry',
        'N',
        'runs',
        'update prompt tokens',
        'cached',
        'agent GPU-h',
        ...(judged ? ['judge GPU-h'] : []),
        'share',
        'chain calls',
        'chain h',
      ],
      g.groups.map((x) => [
        x.geometry,
        int(x.n),
        int(x.runs),
        int(x.update_prompt_tokens),
        int(x.update_cached_tokens),
        hours(x.gpu_hours),
        ...(judged ? [hours(x.judge_gpu_hours)] : []),
        `${(100 * x.share).toFixed(1)}%`,
        int(x.critical_path_calls),
        hours(x.critical_path_hours),
      ]),
      judged ? [1, 2, 3, 4, 5, 6, 7, 8, 9] : [1, 2, 3, 4, 5, 6, 7, 8],
    ),
  );
  out.push('');
  out.push(
    `GPU-hours: agents ${hours(g.gpu_hours)}${judged ? `, judge ${hours(g.judge_gpu_hours)} at most (an identical answer is judged once${same ? "; priced on the agents' model: give the judge's with --judge-gpu" : ''})` : ''}, total ${hours(g.total_gpu_hours)}; the prefix cache saves ${hours(g.prefix_cache_saved_gpu_hours)}.`,
  );
  out.push(
    `Critical path: ${int(g.critical_path_calls)} calls in a chain, ${hours(g.critical_path_hours)} h on an idle GPU; beyond about ${int(g.useful_gpus)} GPUs the sweep finishes no sooner.`,
  );
  out.push(
    `Wall clock on ${int(g.gpus)} GPU${g.gpus === 1 ? '' : 's'}${g.gpus === 1 ? ' (give yours with --gpus G)' : ''}: about ${formatDuration(g.wall_hours * 3600)} (max of total / G and the critical path; queueing not counted).`,
  );
  return `${out.join('\n')}\n`;
}

/** Seconds as days and hours (a campaign), or minutes and seconds (a test sweep). */
export function formatDuration(seconds: number): string {
  const s = Math.round(seconds);
  if (s >= 86_400) return `${Math.floor(s / 86_400)} d ${Math.floor((s % 86_400) / 3600)} h`;
  if (s >= 3600) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  if (s >= 60) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${s} s`;
}

/** The line an adaptive sweep's plan starts with: what the maximum below counts. */
function adaptiveText(spec: SweepSpec): string {
  if (Array.isArray(spec.temperatures)) return '';
  const a = spec.temperatures.adaptive;
  return `adaptive temperatures (${a.target} over [${a.range.join(', ')}]): ${startGrid(a).length} to start, ${a.add} added in each of ${a.rounds} rounds; the maximum cost below counts ${maxTemperatureCount(spec.temperatures)} temperatures per configuration group\n`;
}

function planText(name: string, sweeps: number, c: CampaignCost): string {
  const out: string[] = [];
  out.push(
    `${name}: ${int(c.configurations)} configurations, ${int(c.runs)} runs, ${int(c.events)} events (${
      // Team runs (docs/teams.md) have no population context to list.
      c.contexts.length === 0 ? 'team schedules: one event per call' : `${sweeps} sweeps: N initial answers and N updates per sweep per run`
    })`,
  );
  out.push('');
  const priced = c.total.cost !== undefined;
  out.push(
    formatTable(
      ['LLM calls', 'calls', 'prompt tokens', 'completion tokens', ...(priced ? ['cost'] : [])],
      [
        ...c.calls.map((k) => [
          k.atMost ? `${k.kind} (at most)` : k.kind,
          int(k.calls),
          int(k.promptTokens),
          int(k.completionTokens),
          ...(priced ? [k.cost!.toFixed(2)] : []),
        ]),
        [
          'total',
          int(c.total.calls),
          int(c.total.promptTokens),
          int(c.total.completionTokens),
          ...(priced ? [c.total.cost!.toFixed(2)] : []),
        ],
      ],
      [1, 2, 3, 4],
    ),
  );
  out.push('');
  const split = budgetRuleLine(c.relayAnswerTokens);
  const maxTokens = `${c.answerTokens} tokens each (max_tokens${c.fixedLength ? ', fixed_length: exact' : ', without fixed_length: a ceiling'})`;
  const answers = c.answersAtMaxTokens ? (split ? `${maxTokens}; ${split}` : maxTokens) : split;
  out.push(
    `Answers: ${answers}; prompt tokens estimated at ${CHARS_PER_TOKEN} characters a token from the template, the question and the answers each update quotes.`,
  );
  if (c.contexts.length > 0) {
    out.push('');
    out.push(
      formatTable(
        ['geometry', 'N', 'k', 'runs', 'events', 'update prompt tokens'],
        c.contexts.map((x) => [x.geometry, int(x.n), int(x.k), int(x.runs), int(x.events), int(x.updatePromptTokens)]),
        [1, 2, 3, 4, 5],
      ),
    );
  }
  if (c.contextLimit !== undefined && c.contexts.length > 0) {
    const largest = Math.max(...c.contexts.map((x) => x.updatePromptTokens));
    out.push(
      `Largest update prompt: about ${int(largest)} tokens, within max_context_tokens ${int(c.contextLimit)} less the reply (checked with every quoted answer at max_tokens).`,
    );
  }
  out.push('');
  const rate = `${c.callsPerSecond.toLocaleString('en-US')} calls/s${c.assumedRate ? ' (assumed; give yours with --calls-per-s R)' : ''}`;
  const all = c.calls.length > 1 ? `; every call through the same rate: ${formatDuration(c.seconds.all)}` : '';
  out.push(`Time at ${rate}: the agents' calls ${formatDuration(c.seconds.agents)}${all}.`);
  return `${out.join('\n')}\n`;
}

/**
 * The relay's token budget rule in words (team.budget_rule): pooled, what a member may write; split, the caps
 * set in advance at each N.
 */
function budgetRuleLine(relay: CampaignCost['relayAnswerTokens']): string {
  if (!relay) return '';
  const pooled = relay.filter((r) => r.pooled);
  const split = relay.filter((r) => !r.pooled);
  const lines: string[] = [];
  if (pooled.length > 0)
    lines.push(
      `relay members: team.token_budget ${pooled[0].budget} pooled over the chain (budget_rule: pool): member k of N writes at most what the members before it left, divided over the N - k + 1 members still to write, the last all that is left; the chain writes at most ${pooled[0].budget} tokens at every N (N = ${pooled.map((r) => r.n).join(', ')})`,
    );
  if (split.length > 0)
    lines.push(
      `relay members: team.token_budget ${split[0].budget} split over the chain (budget_rule: split), ${split.map((r) => `${r.tokens} at N = ${r.n}`).join(', ')} tokens each`,
    );
  return lines.join('; ');
}
