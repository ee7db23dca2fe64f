import { z } from 'zod';

/** Geometries that need no parameter and may be written as a bare string in a sweep spec. */
export const GEOMETRY_SHORTHANDS = ['ring', 'torus2d', 'torus3d', 'meanfield', 'chain', 'star'] as const;
export type GeometryShorthand = (typeof GEOMETRY_SHORTHANDS)[number];

/** Every geometry kind (docs/DESIGN.md#geometries). */
export const GEOMETRY_KINDS = [...GEOMETRY_SHORTHANDS, 'random-regular', 'small-world', 'edges'] as const;
export type GeometryKind = (typeof GEOMETRY_KINDS)[number];

const degree = z.int().min(1).max(1_000_000);

const objectSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('ring') }),
  z.strictObject({ kind: z.literal('torus2d') }),
  z.strictObject({ kind: z.literal('torus3d') }),
  z.strictObject({
    kind: z.literal('meanfield'),
    /** Annealed mean field: each update reads k distinct peers drawn uniformly (k <= N - 1). */
    sample: degree.optional(),
  }),
  z.strictObject({ kind: z.literal('chain') }),
  z.strictObject({ kind: z.literal('star') }),
  z.strictObject({
    kind: z.literal('random-regular'),
    /** Degree of every agent; N * k must be even and k < N. */
    k: degree,
  }),
  z.strictObject({
    kind: z.literal('small-world'),
    /** Even degree of the starting ring lattice (k / 2 neighbours on each side). */
    k: z.int().min(2).max(1_000_000).multipleOf(2, { message: 'small-world k must be even (k / 2 neighbours on each side)' }),
    /** Probability of rewiring each lattice edge, in [0, 1]. */
    beta: z.number().min(0).max(1),
  }),
  z.strictObject({
    kind: z.literal('edges'),
    /** Undirected edge list: one `i j` pair of 0-based agent indices per line. */
    path: z.string().min(1),
  }),
]);

const OBJECT_EXAMPLES: Record<string, string> = {
  'random-regular': '{kind: random-regular, k: 4}',
  'small-world': '{kind: small-world, k: 4, beta: 0.1}',
  edges: '{kind: edges, path: FILE}',
};

const shorthandSchema = z
  .enum(GEOMETRY_SHORTHANDS, {
    error: (iss) => {
      if (typeof iss.input !== 'string') return undefined;
      const example = OBJECT_EXAMPLES[iss.input];
      if (example) return `geometry "${iss.input}" needs parameters: write it as an object, e.g. ${example}`;
      return (
        `unknown geometry "${iss.input}": expected one of ${GEOMETRY_SHORTHANDS.join(', ')}, or an object such as ` +
        Object.values(OBJECT_EXAMPLES).join(', ')
      );
    },
  })
  .transform((kind) => ({ kind }) as GeometrySpec);

/**
 * One entry of a sweep spec's `geometries` list: a bare name (`ring`, `torus2d`, `torus3d`, `meanfield`,
 * `chain`, `star`) or a strict object with a `kind`. Always normalises to an object (`GeometrySpec`).
 */
export const geometrySchema = z.union([shorthandSchema, objectSchema], {
  // A union reports every option's issues; name only those of the option the input was meant for.
  error: (iss) => {
    if (iss.code !== 'invalid_union' || !('errors' in iss)) return undefined;
    const input: unknown = iss.input;
    if (typeof input === 'string') return iss.errors[0]?.[0]?.message;
    if (typeof input !== 'object' || input === null || Array.isArray(input)) {
      return `a geometry is a name (${GEOMETRY_SHORTHANDS.join(', ')}) or an object with a kind, got ${JSON.stringify(input)}`;
    }
    const issues = iss.errors[1] ?? [];
    return issues.map((i) => `${i.path.length ? `${i.path.join('.')}: ` : ''}${i.message}`).join('; ') || undefined;
  },
});

/** A normalised geometry: always an object with a `kind`. */
export type GeometrySpec = z.output<typeof objectSchema>;
/** What a sweep spec may say: a shorthand string or a geometry object. */
export type GeometryInput = z.input<typeof geometrySchema>;

/** Formats a number for a label: shortest round-trip decimal, no spaces. */
function num(x: number): string {
  return String(x);
}

/** The file name without folders and without its last extension, made safe for a run id. */
export function fileStem(path: string): string {
  const base =
    path
      .replace(/[\\/]+$/, '')
      .split(/[\\/]/)
      .pop() ?? '';
  const dot = base.lastIndexOf('.');
  const stem = dot > 0 ? base.slice(0, dot) : base;
  const safe = stem
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return safe || 'file';
}

/**
 * A short, stable label for run ids: lowercase, no spaces or colons. `ring`, `torus2d`, `meanfield`,
 * `meanfield-s8`, `random-regular-k4`, `small-world-k4-b0.1`, `edges-<file stem>`.
 */
export function geometryLabel(spec: GeometrySpec): string {
  switch (spec.kind) {
    case 'ring':
    case 'torus2d':
    case 'torus3d':
    case 'chain':
    case 'star':
      return spec.kind;
    case 'meanfield':
      return spec.sample === undefined ? 'meanfield' : `meanfield-s${spec.sample}`;
    case 'random-regular':
      return `random-regular-k${spec.k}`;
    case 'small-world':
      return `small-world-k${spec.k}-b${num(spec.beta)}`;
    case 'edges':
      return `edges-${fileStem(spec.path)}`;
  }
}

/**
 * True for static geometries whose edges have no direction (j in N(i) iff i in N(j)): every geometry but
 * `chain` (a directed relay) and annealed `meanfield` with `sample` (a fresh draw per update).
 */
export function isUndirected(spec: GeometrySpec): boolean {
  if (spec.kind === 'chain') return false;
  if (spec.kind === 'meanfield' && spec.sample !== undefined) return false;
  return true;
}
