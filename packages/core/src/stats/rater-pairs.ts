import { cohenKappa, type Agreement } from './kappa.js';

/** One labelled item: its prompt and each rater's label (absent: that rater did not label it). */
export interface RatedItem {
  prompt: string;
  labels: Record<string, string | undefined>;
}

/** Agreement of one pair of raters over one scope: every prompt pooled, or one prompt. */
export interface PairAgreement extends Agreement {
  a: string;
  b: string;
  /** `pooled` or a prompt id. */
  scope: string;
}

/**
 * Agreement and Cohen's kappa of every pair of raters (in the order given: the judge first makes "judge vs
 * each annotator" come first), pooled over the items whose prompt is not excluded, then per prompt (every
 * prompt, excluded ones too: a per-prompt row is not pooled). Each pair counts the items both labelled.
 */
export function raterPairs(items: readonly RatedItem[], raters: readonly string[], exclude: readonly string[] = []): PairAgreement[] {
  const prompts = [...new Set(items.map((it) => it.prompt))].sort();
  const out: PairAgreement[] = [];
  for (let i = 0; i < raters.length; i++) {
    for (let j = i + 1; j < raters.length; j++) {
      const [a, b] = [raters[i], raters[j]];
      const scopes: [string, readonly RatedItem[]][] = [
        ['pooled', items.filter((it) => !exclude.includes(it.prompt))],
        ...prompts.map((p): [string, RatedItem[]] => [p, items.filter((it) => it.prompt === p)]),
      ];
      for (const [scope, some] of scopes) {
        const both = some.filter((it) => it.labels[a] !== undefined && it.labels[b] !== undefined);
        out.push({
          a,
          b,
          scope,
          ...cohenKappa(
            both.map((it) => it.labels[a]!),
            both.map((it) => it.labels[b]!),
          ),
        });
      }
    }
  }
  return out;
}
