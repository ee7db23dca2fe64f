import { raterPairs } from '@panta/core';
import { readAnnotation } from './annotation.js';
import { excluded, exclusionNote } from './arms.js';
import type { CorpusData } from './corpus-data.js';
import type { Cell, Table } from './table.js';

/** Table 8 of the paper: agreement and Cohen's kappa, judge vs each annotator and annotators pairwise; null before `panta annotate score`. */
export function annotationTable(data: CorpusData): Table | null {
  const record = readAnnotation(data.dir);
  if (!record) return null;
  const ex = excluded(data);
  const pairs = raterPairs(
    record.items.map((it) => ({ prompt: it.prompt_id, labels: it.labels })),
    record.raters,
    ex,
  );
  const undefinedReasons = new Set(pairs.filter((p) => p.kappa === null && p.undefinedBecause).map((p) => p.undefinedBecause!));
  const rows: Cell[][] = pairs.map((p) => [
    `${p.a} vs ${p.b}`,
    p.scope === 'pooled' ? (ex.length > 0 ? `pooled (without ${ex.join(', ')})` : 'pooled') : p.scope,
    p.n,
    p.agreement === null ? null : 100 * p.agreement,
    p.kappa,
  ]);
  const stale = record.fingerprint !== data.manifest.fingerprint;
  return {
    id: 'human-validation',
    title: "Table 8: human validation, agreement and Cohen's kappa",
    caption:
      `${record.items.length} answers labelled by ${record.raters.length - 1} annotator${record.raters.length === 2 ? '' : 's'} (${record.raters.slice(1).join(', ')}), ` +
      `blind to the judge's tags (panta annotate export, then score, ${record.scored_at}): per pair of raters, the items both labelled, the agreement (share labelled alike, %) ` +
      "and Cohen's kappa = (p_o − p_e) / (1 − p_e), p_e the agreement two raters with these label frequencies reach by chance; " +
      'the pooled rows pool prompts, the others are per prompt. The sample oversamples rare tags, so its frequencies do not mirror the corpus.' +
      (undefinedReasons.size > 0 ? ` n/a: kappa undefined (${[...undefinedReasons].join('; ')}).` : '') +
      exclusionNote(data).replace('this pooled analysis', 'the pooled rows') +
      (stale ? ' Note: annotation.json was scored against another state of this corpus (its fingerprint differs); score again.' : ''),
    columns: ['raters', 'scope', 'items', 'agreement (%)', "Cohen's κ"],
    rows,
  };
}
