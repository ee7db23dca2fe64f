import { z } from 'zod';
import { geometryLabel, geometrySchema } from '../geometry/index.js';
import { backendSchema, judgeBackendSchema, judgeInFlight } from './backend.js';
import { MAX_RUNS, MAX_SWEEPS } from './bounds.js';
import { armLabel, populationArmLabel, type PopulationArmInput } from './arms.js';
import { parseMemoryBudget } from './memory.js';
import { temperaturesSchema } from './temperatures.js';
import { DEFAULT_PROTOCOL, isProtocolName, PROTOCOL_NAMES, type ProtocolName } from '../protocol/registry.js';

/**
 * Refuses a list with a repeated entry (by `key`), blaming the repeat itself (`temperatures[1]`): a
 * repeated grid value would make two runs with one id, and a repeated encoder two columns with one name.
 */
function noRepeats<T>(key: (entry: T) => unknown = (entry) => entry, show: (entry: T) => string = (entry) => JSON.stringify(entry)) {
  return (list: readonly T[], ctx: z.RefinementCtx): void => {
    const seen = new Map<unknown, number>();
    list.forEach((entry, i) => {
      const first = seen.get(key(entry));
      if (first === undefined) seen.set(key(entry), i);
      else
        ctx.addIssue({
          code: 'custom',
          path: [i],
          input: entry,
          message: `${show(entry)} is listed twice (first at index ${first})`,
          params: { fix: 'remove the repeated entry' },
        });
    });
  };
}

/** A name that goes into run ids (and so file names and queue job ids). */
const armName = z.string().regex(/^[A-Za-z0-9._-]+$/, 'letters, digits, ".", "_" and "-" only');

const encoderName = z.string().regex(/^[a-z][a-z0-9_]*$/, 'lowercase letters, digits and _ only, starting with a letter');

export const encoderSchema = z.discriminatedUnion('kind', [
  z.strictObject({ name: encoderName, kind: z.literal('hashing'), dim: z.int().min(8).max(8192).default(384) }),
  z.strictObject({
    name: encoderName,
    kind: z.literal('onnx'),
    path: z.string().min(1),
    /** Most sentences in one session run (the micro-batcher gathers concurrent events up to this). */
    max_batch: z.int().min(1).default(32),
    /** How long the micro-batcher waits for more sentences before it runs a batch, in ms. */
    max_wait_ms: z.int().nonnegative().default(2),
    /** Caps the model's own sequence length (tokens); default the model's. */
    max_length: z.int().min(1).optional(),
    /** onnxruntime intra-op threads; default onnxruntime's choice. */
    threads: z.int().min(1).optional(),
    /** cuda: on the GPU where onnxruntime-node's CUDA provider starts, else on CPU with one warning line (PANTA_ENCODER_DEVICE=cuda-only refuses instead). */
    device: z.enum(['cpu', 'cuda']).default('cpu'),
  }),
]);

export const judgeSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('reference') }),
  /** backend.max_in_flight: default the sweep's concurrency, at least 64, per endpoint (resolveJudgeInFlight). */
  z.strictObject({ kind: z.literal('llm'), backend: judgeBackendSchema }),
]);

/**
 * Coordination protocols (docs/DESIGN.md#coordination-protocols): a gridded axis. The names are the protocol registry's (protocol/registry.ts), read
 * when a spec is parsed, so a registered protocol is accepted as a built-in one; the JSON Schema lists them.
 */
const protocolSchema = z
  .string()
  .superRefine((name, ctx) => {
    if (!isProtocolName(name)) ctx.addIssue({ code: 'invalid_value', values: [...PROTOCOL_NAMES], input: name });
  })
  .meta({ enum: PROTOCOL_NAMES }) as unknown as z.ZodType<ProtocolName, string>;

const sizeList = z.array(z.int().min(1)).min(1).superRefine(noRepeats<number>());

/** Update rules (docs/DESIGN.md#dynamics) and team schedules (docs/teams.md): a gridded axis. */
export const DYNAMICS = ['asynchronous', 'synchronous', 'relay', 'hub', 'debate'] as const;
const dynamicsSchema = z.enum(DYNAMICS);

const templateRef = z.string().min(1);

/** How agents get personas or beliefs from a population file (one arm of the population axis). */
const populationAssign = {
  /** same: every agent gets the first entry; distinct: entries dealt out to all agents; fraction: to a share of them. */
  assign: z.enum(['same', 'distinct', 'fraction']).default('distinct'),
  /** Share of agents that get an entry when assign is fraction. */
  fraction: z.number().min(0).max(1).default(0.1),
};

/**
 * An arm of a gridded population: a file dealt out as `assign` says, or none (a homogeneous arm). Its name
 * goes into the config id; default the file's name without its extension, or `none` without a file.
 */
const populationArmSchema = z.strictObject({
  name: armName.optional(),
  /** JSON lines {id, persona?, belief?}, relative to the spec file; absent: no personas or beliefs. */
  file: z.string().min(1).optional(),
  ...populationAssign,
});

/** The sweep spec of docs/DESIGN.md#sweep-spec. Every key is documented with its default. */
export const sweepSpecSchema = z.strictObject({
  /** Names the sweep; default output folder is runs/<name>. */
  name: z.string().regex(/^[A-Za-z0-9._-]+$/, 'letters, digits, ".", "_" and "-" only'),
  /**
   * Where this sweep departs from the paper whose protocol it follows, in words (one item each): kept in the
   * manifest's spec and listed by `panta publish` in the dataset card. Description only: not part of the corpus's
   * identity (a sweep resumes with it added or changed).
   */
  departures: z.array(z.string().min(1)).optional(),
  /**
   * Prompts the report leaves out of the main text's pooled analyses (Table 9, Table 8's pooled rows, Figure 5,
   * the majority grid) by default, as the Rheon paper leaves out its Prompt 1 (fq117 of rheon6) after finding its
   * judge labels inverted; `panta report --exclude-prompts` overrides it. Table 7's pooled column and Table 10
   * pool every prompt. Reporting only: not part of the corpus's identity.
   */
  exclude_prompts: z.array(z.string().min(1)).superRefine(noRepeats<string>()).optional(),
  /** JSON-lines prompt set, relative to the spec file. */
  dataset: z.string().min(1),
  /** Prompt ids to run; default every prompt of the dataset. */
  prompts: z.array(z.string().min(1)).min(1).superRefine(noRepeats<string>()).optional(),
  geometries: z
    .array(geometrySchema)
    .min(1)
    .superRefine(noRepeats(geometryLabel, (g) => `geometry ${geometryLabel(g)}`)),
  /** A list that fits every geometry, or a map from geometry label (or kind) to its own list. */
  sizes: z.union([sizeList, z.record(z.string(), sizeList)]),
  /**
   * A list (a gridded axis), or {adaptive: {range: [lo, hi], start, add, rounds, target}}: temperatures added
   * round by round where the target is least resolved (spec/temperatures.ts, adaptive.ts).
   */
  temperatures: temperaturesSchema(z.array(z.number().nonnegative()).min(1).superRefine(noRepeats<number>())),
  trials: z.int().min(1).max(MAX_RUNS).default(1),
  /**
   * Which prompts a configuration's trials run. `drawn`: each trial runs one prompt drawn uniformly at random
   * from the dataset (seeded by the sweep's seed and the trial index, so every arm's trial k runs the same
   * prompt), so a condition has `trials` runs in all (the SSVP paper's "scenario selection is uniform-random per
   * trial", 30 trials per condition). `every`: every prompt runs `trials` times. Default: `drawn` when every
   * prompt carries checkable `assertions` (a study's scenarios with assertions), else `every`.
   */
  trial_prompts: z.enum(['drawn', 'every']).optional(),
  /** Sweeps after the initial answers: each run has (sweeps + 1) * N events. */
  sweeps: z.int().min(1).max(MAX_SWEEPS).default(10),
  /** Seed of the whole sweep; each run's seed is derived from it and the run id. */
  seed: z.int().nonnegative().max(Number.MAX_SAFE_INTEGER).optional(),
  /** asynchronous (Glauber-like) or synchronous updates, or a list of both (a gridded axis). */
  dynamics: z.union([dynamicsSchema, z.array(dynamicsSchema).min(1).superRefine(noRepeats<string>())]).default('asynchronous'),
  /** A coordination protocol, or a list of them (a gridded axis). */
  protocol: z.union([protocolSchema, z.array(protocolSchema).min(1).superRefine(noRepeats<string>())]).default(DEFAULT_PROTOCOL),
  backend: backendSchema.prefault({ kind: 'surrogate' }),
  encoders: z
    .array(encoderSchema)
    .min(1)
    .superRefine(
      noRepeats(
        (e: { name: string }) => e.name,
        (e) => `encoder name "${e.name}"`,
      ),
    )
    .prefault([{ name: 'hashing', kind: 'hashing' }]),
  judge: judgeSchema.prefault({ kind: 'reference' }),
  /**
   * Prompt template file, relative to the spec file; default the shipped template. A list is a gridded
   * axis: each arm is named in the config id by its file's name without the extension.
   */
  template: z
    .union([
      templateRef,
      z
        .array(templateRef)
        .min(1)
        .superRefine(
          noRepeats(
            (ref: string) => armLabel(ref),
            (ref) => `template ${JSON.stringify(ref)} (arm name "${armLabel(ref)}")`,
          ),
        ),
    ])
    .optional(),
  /**
   * The order of a prompt's neighbour lines on graphs whose own order is agent number (a mean field, sampled or
   * not, a star, random and given graphs; lattices and chains keep their direction either way). per-event
   * (absent means per-event): a fresh seeded order each event. per-run: one seeded order of the run's agents,
   * the same for every event of the run, so that consecutive prompts share a prefix a server's prefix cache
   * can reuse (pair it with `template: rheon-a2-prefix`); seeded per run, so no agent heads every run's prompts.
   * Optional rather than defaulted, so that earlier corpora keep their fingerprint.
   */
  neighbour_order: z.enum(['per-event', 'per-run']).optional(),
  /** At most 2^31 - 1: the corpus's completion_tokens column is a 32-bit integer. */
  max_tokens: z.int().min(1).max(2_147_483_647).default(100),
  /** Ask for exactly max_tokens tokens (vLLM: min_tokens = max_tokens). */
  fixed_length: z.boolean().default(false),
  /**
   * zca: regularised ZCA whitening per (prompt, encoder); raw: spins are the raw embeddings; {from: CORPUS}:
   * the whitening another corpus fitted (its folder, relative to the spec file), so that both measure m and
   * q in one basis.
   */
  whitening: z.union([z.enum(['zca', 'raw']), z.strictObject({ from: z.string().min(1) })]).default('zca'),
  /** Events in flight at once. */
  concurrency: z.int().min(1).max(65_536).default(64),
  /**
   * Planner look-ahead: how many events past the oldest unwritten one may be planned. It bounds the
   * parallelism the planner can find and the results held before they are written (about 2 KB each). The
   * planner keeps about 44 bytes per event of look-ahead per open run, so it is capped at 2^22 (~185 MB).
   */
  lookahead: z.int().min(16).max(4_194_304).default(16_384),
  /**
   * Memory the sweep's process may use: bytes, or a size such as "16 GiB" or "512 MB". Default the
   * machine's (or its cgroup's limit). A size whose estimated memory exceeds 90% of it is refused before
   * anything runs (see README "## Scale").
   */
  memory_budget: z
    .union([z.number(), z.string()])
    .superRefine((v, ctx) => {
      if (parseMemoryBudget(v) === undefined) {
        ctx.addIssue({
          code: 'custom',
          input: v,
          message: `${JSON.stringify(v)} is not a memory size above 0`,
          params: { fix: 'use bytes (an integer), or a size such as "16 GiB" or "512 MB"' },
        });
      }
    })
    .optional(),
  /** Shared State Verification Protocol: above divergence tau the agent reads its neighbours through a merge call. */
  ssvp: z
    .strictObject({
      /**
       * The CDS above which a pair is merged: a number, or {calibrate: FP, from: CORPUS}, the lowest tau whose
       * false-positive share on CORPUS's no-sync arm (or `arm`) is below FP (`panta calibrate-tau CORPUS` first).
       */
      tau: z
        .union([
          z.number().min(0).max(2),
          z.strictObject({
            calibrate: z.number().gt(0).max(1),
            /** A corpus folder, relative to the spec file, where `panta calibrate-tau` has run. */
            from: z.string().min(1),
            /** The arm whose calibration is used (`panta calibrate-tau --arm`); default no-sync. */
            arm: z.string().min(1).optional(),
          }),
        ])
        .default(0.25),
      /** Encoder whose embeddings measure divergence; default the first encoder. */
      encoder: encoderName.optional(),
    })
    .prefault({}),
  /** Heterogeneous populations: personas or hidden beliefs from a JSON-lines file, assigned by a seeded rule. */
  /** A list of arms ({name?, file?, assign, fraction}; no file: no personas) is a gridded axis. */
  population: z
    .union([
      z.strictObject({
        /** JSON lines {id, persona?, belief?}, relative to the spec file. */
        file: z.string().min(1),
        ...populationAssign,
      }),
      z
        .array(populationArmSchema)
        .min(1)
        .superRefine(
          noRepeats(
            (arm: PopulationArmInput) => populationArmLabel(arm),
            (arm) => `population arm "${populationArmLabel(arm)}"`,
          ),
        ),
    ])
    .optional(),
  /** Temperature per sweep: from the configuration's T at sweep 1 to `to` at the last sweep. */
  annealing: z.strictObject({ to: z.number().nonnegative(), shape: z.enum(['linear', 'geometric']).default('linear') }).optional(),
  /**
   * Stop a run once magnetisation and rho have both settled: over the last `window` sweeps neither moved
   * more than its tolerance. bench/early-stopping.mjs measures the calls the defaults save on the quickstart.
   */
  early_stopping: z
    .strictObject({
      window: z.int().min(1).default(2),
      /** Largest change of magnetisation over the window. */
      tolerance: z.number().positive().default(0.04),
      /** Largest change of rho over the window (rho moves in steps of 1/N: finer than magnetisation). */
      rho_tolerance: z.number().positive().default(0.03),
      /** Never stop before this sweep. */
      min_sweeps: z.int().min(1).default(2),
    })
    .optional(),
  /**
   * Drift (docs/DESIGN.md#accuracy-focus-and-drift): accuracy more than `tolerance` below an earlier sweep's best for 2+ consecutive
   * sweeps. auto: 2/sqrt(N), four binomial standard errors of an accuracy over the run's N agents at p = 1/2.
   * Absent means auto (optional rather than defaulted, so that earlier corpora keep their fingerprint).
   */
  drift: z.strictObject({ tolerance: z.union([z.literal('auto'), z.number().min(0).max(1)]).default('auto') }).optional(),
  /**
   * Team schedules (dynamics relay, hub, debate; docs/teams.md). Optional rather than defaulted, so that
   * earlier corpora keep their fingerprint.
   */
  team: z
    .strictObject({
      /** relay: total completion tokens of the chain, shared as `budget_rule` says. */
      token_budget: z.int().min(1).max(2_147_483_647).optional(),
      /**
       * relay with token_budget: pool (the paper's, and a new sweep's): member k may write what the members before
       * it left of the budget, divided over the members still to write (k included), so the last has all that is
       * left; split: each member at most floor(budget / N), set in advance (what a stored spec without the key, a
       * corpus from before it, was run with).
       */
      budget_rule: z.enum(['pool', 'split']).optional(),
      /** debate: every earlier turn (all) or only the previous one (recent) in each contribution's prompt. */
      memory: z.enum(['all', 'recent']).default('all'),
      /** relay and hub, arm board: tokens the rendered belief board may take in a prompt; default 256. */
      board_tokens: z.int().min(1).max(1_000_000).optional(),
      /**
       * debate: a turn's solution is the winning contribution passed through a solution-extraction call
       * (extracted, the paper's; what a new sweep resolves to) or the winning contribution verbatim (the
       * layout of corpora from before the key, which an absent key reads back as).
       */
      solution: z.enum(['extracted', 'verbatim']).optional(),
      /**
       * relay and hub, arms board and board_inert: what a board line on an object already on the board revises.
       * author (the paper's, and a new sweep's): the author's own latest entry on it, other members' entries
       * standing beside it; object: the object's latest entry, whoever wrote it. A new sweep stores the resolved
       * value; a stored spec without the key (a corpus from before it) was run `object`.
       */
      revisions: z.enum(['author', 'object']).optional(),
      /**
       * debate: how a turn decides its solution: an end-of-turn vote (vote, the default) or consensus (no votes:
       * each participant improves the draft in turn, and the last contribution is the turn's solution).
       */
      decision: z.enum(['vote', 'consensus']).optional(),
      /**
       * debate: BERTScore of each turn's solution against the prompt's references (its accepted answers), on the
       * contextual encoder in `model` (an ONNX export whose output is last_hidden_state; a relative path is relative
       * to the spec file); `idf` weights tokens by their idf over the references, `baseline` rescales as
       * (s - b) / (1 - b). Absent: team_bertscore.parquet has no scores, and the report says so.
       */
      bertscore: z
        .strictObject({
          model: z.string().min(1),
          idf: z.boolean().default(false),
          baseline: z.number().min(-1).lt(1).optional(),
        })
        .optional(),
    })
    .optional(),
  /** Output folder, relative to the working directory; default runs/<name>. */
  out: z.string().min(1).optional(),
});

/**
 * Gives an LLM judge whose spec sets no max_in_flight (0 after parsing) the one that follows the sweep's
 * concurrency (judgeInFlight). Called once the concurrency the sweep runs at is known (after a
 * `--concurrency` override), not while parsing: a resolved value could no longer be told from a set one.
 */
export function resolveJudgeInFlight(spec: SweepSpec): void {
  const { judge } = spec;
  if (judge.kind === 'llm' && judge.backend.kind !== 'surrogate' && judge.backend.max_in_flight === 0)
    judge.backend.max_in_flight = judgeInFlight(spec.concurrency);
}

export type SweepSpecInput = z.input<typeof sweepSpecSchema>;
export type SweepSpec = z.output<typeof sweepSpecSchema>;
export type EncoderSpec = z.infer<typeof encoderSchema>;
export type JudgeSpec = z.infer<typeof judgeSchema>;
export type Protocol = ProtocolName;
export type EarlyStoppingSpec = NonNullable<SweepSpec['early_stopping']>;
export type AnnealingSpec = NonNullable<SweepSpec['annealing']>;
/** How a population is dealt out to agents (one arm of the population axis). */
export type PopulationSpec = { assign: 'same' | 'distinct' | 'fraction'; fraction: number };
export type Dynamics = (typeof DYNAMICS)[number];
export type TeamSpec = NonNullable<SweepSpec['team']>;
export type WhiteningSpec = SweepSpec['whitening'];

/** The JSON Schema of sweep specs (input form: defaults make keys optional), for editor completion. */
export function sweepSpecJsonSchema(): unknown {
  return {
    $id: 'https://panta.dev/schema/sweep.schema.json',
    title: 'Panta sweep spec',
    ...(z.toJSONSchema(sweepSpecSchema, { io: 'input', unrepresentable: 'any' }) as object),
  };
}
