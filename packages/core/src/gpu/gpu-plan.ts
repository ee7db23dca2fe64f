import { type CampaignInput, campaignCost, initialPromptTokens } from '../campaign-cost.js';
import { isJudgeKind } from '../judge-calls.js';
import { CHARS_PER_TOKEN } from '../names.js';
import { type EdgeLists, type RunPlan, runEvents } from '../plan.js';
import type { ShardPolicy } from '../spec/shard.js';
import { DEFAULT_TEMPLATE, type PromptTemplate, renderPrompt } from '../prompt.js';
import { rubric } from '../rubric.js';
import { criticalPath } from '../schedule.js';
import { templateArms } from '../spec/arms.js';
import type { SweepSpec } from '../spec/schema.js';
import { scheduleFor } from '../team/stream.js';
import { builtinTemplate } from '../templates.js';
import { cachedPrefixTokens, GPU_COST_MODELS, type GpuCostModel, requestGpuSeconds } from './cost-model.js';

/**
 * What a sweep costs in GPU time (`panta plan --gpu`): a pure function of the planned runs, campaignCost's
 * token estimates and a GPU cost model (cost-model.ts), so the plan and the simulated vLLM endpoint price a
 * call alike.
 *
 * - Agents: every call's uncached prompt tokens prefilled and its answer decoded in a full batch. The prefix
 *   cache is modelled between consecutive events of a run (vLLM's automatic prefix caching, whole blocks):
 *   the N initial prompts of a run are one text, and an update shares with the one before it what the
 *   template puts ahead of the first line that changes from agent to agent (with the default template, the
 *   system message, the question and t, T, k: little; with a layout that puts the neighbours' answers first
 *   and lists them in one order per run, also the neighbour lines ahead of the first that changed).
 * - The LLM judge: its rubric and the answer, the rubric ahead of the answer served from the cache.
 * - The critical path: the longest chain of events that read each other's answers (the run's schedule),
 *   each call at its time on an idle GPU (prefill, then one decode step per output token at the step floor).
 *   A full mean field under asynchronous updates is one chain of sweeps x N updates.
 * - useful GPUs: total GPU time / critical path, beyond which the sweep finishes no sooner; wall clock on G
 *   GPUs: max(total / G, critical path).
 * Not modelled: the queueing of chains behind other events on a busy server (the simulator measures it).
 */

/** How a run lists a node's neighbours in its prompts: reshuffled per event, or in one order per run. */
export type NeighbourOrder = 'per-event' | 'per-run';

export interface GpuPlanInput extends CampaignInput {
  model: GpuCostModel;
  /** The judge's server (default: `model`). */
  judgeModel?: GpuCostModel;
  /** GPUs the wall clock is given for (default 1). */
  gpus?: number;
  /** Overrides the spec's neighbour_order (absent: per-event, the order Panta's schedule has always sent). */
  neighbourOrder?: NeighbourOrder;
}

/** One (geometry, N) of the sweep. */
export interface GpuGroup {
  geometry: string;
  n: number;
  runs: number;
  events: number;
  /** Estimated prompt tokens of one update, and how many of them the prefix cache serves. */
  update_prompt_tokens: number;
  update_cached_tokens: number;
  gpu_hours: number;
  judge_gpu_hours: number;
  /** Share of the sweep's GPU time (agents and judge). */
  share: number;
  /** The longest chain of a run of this group, on an idle GPU. */
  critical_path_hours: number;
  critical_path_calls: number;
}

export interface GpuPlan {
  model: string;
  judge_model: string;
  neighbour_order: NeighbourOrder;
  groups: GpuGroup[];
  /** Agents' GPU-hours (protocol and team calls included). */
  gpu_hours: number;
  judge_gpu_hours: number;
  total_gpu_hours: number;
  /** GPU-hours the agents' prefix cache saves (0 without reuse). */
  prefix_cache_saved_gpu_hours: number;
  critical_path_hours: number;
  critical_path_calls: number;
  useful_gpus: number;
  gpus: number;
  wall_hours: number;
}

/** What one run costs on the model. */
export interface RunGpuCost {
  agentSeconds: number;
  judgeSeconds: number;
  /** Agents' seconds without the prefix cache. */
  uncachedAgentSeconds: number;
  updatePromptTokens: number;
  updateCachedTokens: number;
  /** One call's time on an idle GPU: an initial answer, an update. */
  idleInitialSeconds: number;
  idleUpdateSeconds: number;
}

/** Characters two strings share from the start. */
function commonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/** Characters the system message and the user message of two renderings share from the start (a chat sends system first). */
function sharedChars(a: { system: string; user: string }, b: { system: string; user: string }): number {
  const s = commonPrefix(a.system, b.system);
  return s < a.system.length || s < b.system.length ? s : s + commonPrefix(a.user, b.user);
}

/**
 * Neighbour lines two consecutive updates of a run have in common at the head of the list: with one order per
 * run on a full mean field, every agent but the two involved keeps its place, so the lists agree up to the
 * first of (this event's agent, the agent the event before updated): E[min of two distinct uniform places
 * among N] = (N - 2) / 3. A lattice's agents read other neighbours, and a per-event order shares none.
 */
export function sharedNeighbourLines(run: Pick<RunPlan, 'n' | 'k' | 'geometry'>, order: NeighbourOrder): number {
  if (order !== 'per-run' || run.geometry.kind !== 'meanfield' || run.k !== run.n - 1) return 0;
  return Math.max(0, Math.floor((run.n - 2) / 3));
}

/** Characters of the head two consecutive update prompts of a run share (campaignCost's answers: max_tokens tokens each). */
function updateSharedChars(tpl: PromptTemplate, run: RunPlan, answerChars: number, k: number, order: NeighbourOrder): number {
  const lines = Math.round(k);
  const shared = sharedNeighbourLines(run, order);
  const answer = (c: string) => c.repeat(answerChars);
  const ctx = (own: string, other: string, first: number) => {
    const agents = Array.from({ length: lines }, (_, i) => (i < shared ? i : first + i));
    return renderPrompt(tpl, {
      question: run.prompt.question,
      sweep: run.sweeps,
      temperature: run.temperature,
      previous: answer(own),
      neighbourAgents: agents,
      neighbourAnswers: agents.map((_, i) => (i < shared ? answer('s') : answer(other))),
    });
  };
  return sharedChars(ctx('a', 'x', run.n), ctx('b', 'y', 2 * run.n));
}

function seconds(model: GpuCostModel, promptTokens: number, cachedTokens: number, completionTokens: number): number {
  return requestGpuSeconds(model, promptTokens - cachedTokens, completionTokens);
}

/** A run's GPU time on the model (agents and judge), with the prefix cache as modelled above. */
export function runGpuCost(
  run: RunPlan,
  input: Pick<CampaignInput, 'spec' | 'template' | 'edgeLists'> & {
    model: GpuCostModel;
    judgeModel?: GpuCostModel;
    neighbourOrder?: NeighbourOrder;
  },
): RunGpuCost {
  const { spec, model } = input;
  const judgeModel = input.judgeModel ?? model;
  const order = input.neighbourOrder ?? run.neighbourOrder ?? 'per-event';
  const cost = campaignCost({ spec, runs: [run], template: input.template, ...(input.edgeLists ? { edgeLists: input.edgeLists } : {}) });
  const tpl = run.template ?? input.template;
  const answer = spec.max_tokens;
  const chars = answer * CHARS_PER_TOKEN;
  const tok = (c: number) => Math.floor(c / CHARS_PER_TOKEN);
  let agentSeconds = 0;
  let uncachedAgentSeconds = 0;
  let judgeSeconds = 0;
  let updatePromptTokens = 0;
  let updateCachedTokens = 0;
  let idleInitialSeconds = 0;
  let idleUpdateSeconds = 0;
  for (const c of cost.calls) {
    if (isJudgeKind(c.kind)) {
      // The rubric ahead of the answer is the same for every answer to one question: cached.
      const head = tok(sharedChars(rubric(run.prompt, 'a'.repeat(chars)), rubric(run.prompt, 'b'.repeat(chars))));
      const per = c.calls > 0 ? c.promptTokens / c.calls : 0;
      judgeSeconds += seconds(judgeModel, c.promptTokens, c.calls * cachedPrefixTokens(judgeModel, head, per), c.completionTokens);
      continue;
    }
    uncachedAgentSeconds += seconds(model, c.promptTokens, 0, c.completionTokens);
    if (c.kind !== 'agent' || run.controls.team) {
      agentSeconds += seconds(model, c.promptTokens, 0, c.completionTokens);
      if (c.calls > 0)
        idleUpdateSeconds = Math.max(idleUpdateSeconds, idleSeconds(model, c.promptTokens / c.calls, 0, c.completionTokens / c.calls));
      continue;
    }
    // N initial answers of one text (the first prefilled whole), then N x sweeps updates.
    const n = run.n;
    const updates = c.calls - n;
    const k = cost.contexts[0]?.meanNeighbours ?? 0;
    const initial = initialPromptTokens(tpl, run);
    const update = updates > 0 ? (c.promptTokens - n * initial) / updates : 0;
    const initialCached = cachedPrefixTokens(model, initial, initial);
    const updateCached = updates > 0 ? cachedPrefixTokens(model, tok(updateSharedChars(tpl, run, chars, k, order)), update) : 0;
    agentSeconds += seconds(model, c.promptTokens, (n - 1) * initialCached + updates * updateCached, c.completionTokens);
    updatePromptTokens = update;
    updateCachedTokens = updateCached;
    idleInitialSeconds = idleSeconds(model, initial, initialCached, answer);
    idleUpdateSeconds = updates > 0 ? idleSeconds(model, update, updateCached, answer) : idleInitialSeconds;
  }
  if (idleInitialSeconds === 0) idleInitialSeconds = idleUpdateSeconds;
  return {
    agentSeconds,
    judgeSeconds,
    uncachedAgentSeconds,
    updatePromptTokens,
    updateCachedTokens,
    idleInitialSeconds,
    idleUpdateSeconds,
  };
}

/** One call alone on a GPU: its uncached prompt prefilled, then one decode step per output token at the floor. */
function idleSeconds(model: GpuCostModel, promptTokens: number, cachedTokens: number, outputTokens: number): number {
  return ((promptTokens - cachedTokens) * model.prefillUsPerToken) / 1e6 + (outputTokens * model.decodeStepFloorMs) / 1000;
}

/** Trials of a configuration cost alike, but for a random graph's mean degree (drawn from the run's seed). */
function memoKey(run: RunPlan): string {
  const random = run.geometry.kind === 'random-regular' || run.geometry.kind === 'small-world';
  return random ? `${run.configId}\0${run.seed}` : run.configId;
}

/** Runs of more events than this have their chain estimated, not walked. */
const MAX_WALKED = 1 << 22;

/** Events on the longest chain of a run's schedule (one representative run per shape: its seed changes little). */
function chainCalls(run: RunPlan, edgeLists: EdgeLists, memo: Map<string, number>): number {
  const key = `${run.geometryLabel}/${run.n}/${run.protocol}/${run.dynamics}/${run.sweeps}`;
  let calls = memo.get(key);
  if (calls === undefined) {
    // Walking the schedule costs its reads and 8 bytes an event: beyond MAX_WALKED events, the chain is taken as
    // events / (N / (k + 1)), the parallelism asynchronous updates allow (engine's run order uses the same).
    const events = runEvents(run);
    calls =
      events <= MAX_WALKED || run.controls.team
        ? criticalPath(scheduleFor(run, edgeLists)).criticalPath
        : run.dynamics === 'synchronous'
          ? run.sweeps + 1
          : Math.ceil(events / Math.max(1, Math.floor(run.n / (run.k + 1))));
    memo.set(key, calls);
  }
  return calls;
}

export function gpuPlan(input: GpuPlanInput): GpuPlan {
  const { runs, model } = input;
  const judgeModel = input.judgeModel ?? model;
  const order = input.neighbourOrder ?? input.spec.neighbour_order ?? 'per-event';
  const edgeLists = input.edgeLists ?? new Map();
  const gpus = input.gpus ?? 1;
  const costs = new Map<string, RunGpuCost>();
  const chains = new Map<string, number>();
  const groups = new Map<string, GpuGroup>();
  let agents = 0;
  let judge = 0;
  let uncached = 0;
  let path = 0;
  let pathCalls = 0;
  for (const run of runs) {
    const key = memoKey(run);
    let c = costs.get(key);
    if (!c) costs.set(key, (c = runGpuCost(run, { ...input, judgeModel, neighbourOrder: order, edgeLists })));
    const calls = chainCalls(run, edgeLists, chains);
    const chain = calls > 0 ? c.idleInitialSeconds + (calls - 1) * c.idleUpdateSeconds : 0;
    agents += c.agentSeconds;
    judge += c.judgeSeconds;
    uncached += c.uncachedAgentSeconds;
    if (chain > path) {
      path = chain;
      pathCalls = calls;
    }
    const gkey = `${run.geometryLabel}/${run.n}`;
    const g = groups.get(gkey) ?? {
      geometry: run.geometryLabel,
      n: run.n,
      runs: 0,
      events: 0,
      update_prompt_tokens: c.updatePromptTokens,
      update_cached_tokens: c.updateCachedTokens,
      gpu_hours: 0,
      judge_gpu_hours: 0,
      share: 0,
      critical_path_hours: 0,
      critical_path_calls: 0,
    };
    g.runs++;
    g.events += run.controls.team ? 0 : (run.sweeps + 1) * run.n;
    g.gpu_hours += c.agentSeconds / 3600;
    g.judge_gpu_hours += c.judgeSeconds / 3600;
    if (chain / 3600 > g.critical_path_hours) {
      g.critical_path_hours = chain / 3600;
      g.critical_path_calls = calls;
    }
    groups.set(gkey, g);
  }
  const total = agents + judge;
  for (const g of groups.values()) g.share = total > 0 ? (g.gpu_hours + g.judge_gpu_hours) / (total / 3600) : 0;
  return {
    model: model.name,
    judge_model: judgeModel.name,
    neighbour_order: order,
    groups: [...groups.values()],
    gpu_hours: agents / 3600,
    judge_gpu_hours: judge / 3600,
    total_gpu_hours: total / 3600,
    prefix_cache_saved_gpu_hours: (uncached - agents) / 3600,
    critical_path_hours: path / 3600,
    critical_path_calls: pathCalls,
    useful_gpus: path > 0 ? total / path : gpus,
    gpus,
    wall_hours: Math.max(total / gpus, path) / 3600,
  };
}

/**
 * How `panta run --shard I/N` weighs a run: its GPU seconds (agents and judge) under the built-in H100 model
 * with the template its spec names when that is a built-in (a template file's text is not in the manifest that
 * `panta verify` plans from, so files count as the default template). A pure function of the spec and the run,
 * so every part, `panta merge` and `panta verify` compute the same partition.
 */
export function shardWeigher(spec: SweepSpec, edgeLists: EdgeLists = new Map()): (run: RunPlan) => number {
  const arms = templateArms(spec);
  const model = GPU_COST_MODELS['h100-qwen3-14b'];
  const memo = new Map<string, number>();
  return (run) => {
    // Trials and temperatures weigh alike (T's digits aside, which are left out: the weight is then the same
    // whichever run of a configuration is weighed first): one pricing per prompt, shape and arm.
    const key = [
      run.prompt.id,
      run.geometryLabel,
      run.n,
      run.protocol,
      run.dynamics,
      run.arms?.template,
      run.arms?.population,
      run.sweeps,
    ].join('\0');
    let w = memo.get(key);
    if (w === undefined) {
      const ref = run.arms?.template !== undefined ? arms.find((a) => a.label === run.arms?.template)?.ref : arms[0]?.ref;
      const template = (ref !== undefined ? builtinTemplate(ref) : undefined) ?? DEFAULT_TEMPLATE;
      const c = runGpuCost({ ...run, temperature: 1, template }, { spec, template, edgeLists, model });
      memo.set(key, (w = c.agentSeconds + c.judgeSeconds));
    }
    return w;
  };
}

/** How a part's runs are weighed under a shard policy (spec/shard.ts): planned GPU time, or events. */
export function shardWeigherFor(policy: ShardPolicy, spec: SweepSpec, edgeLists: EdgeLists = new Map()): (run: RunPlan) => number {
  return policy === 'events' ? runEvents : shardWeigher(spec, edgeLists);
}
