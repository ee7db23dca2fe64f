import { judgeOrderParams, judgeRunDrift, writeJudgeTables, type Manifest, type OrderParamRow } from '@panta/corpus';

/**
 * A post-hoc judge's order_params.parquet and runs.parquet from its `tag_<judge>` column and the corpus's
 * order parameters `params` (every encoder's: the judge's tables hold the same rows); drift reads the rows
 * of `encoder` (the first), with the spec's tolerance, as finishSweep does.
 */
export async function rejudgeTables(
  out: string,
  runs: readonly { runId: string; n: number }[],
  judge: string,
  params: readonly OrderParamRow[],
  encoder: string,
  manifest: Manifest,
): Promise<OrderParamRow[]> {
  const judged = await judgeOrderParams(out, runs, judge, params);
  const tolerance = (manifest.spec as { drift?: { tolerance?: number | 'auto' } }).drift?.tolerance ?? 'auto';
  await writeJudgeTables(out, judge, judged, judgeRunDrift(judged, runs, encoder, tolerance));
  return judged;
}
