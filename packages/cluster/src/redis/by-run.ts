/**
 * The positions of `items` grouped by run, each run's in order, runs in order of first appearance: the
 * batched steps pass keys and arguments run by run (one HMGET, one set of keys per run) and put the replies
 * back at these positions.
 */
export function byRun(items: readonly { runId: string }[]): [string, number[]][] {
  const groups = new Map<string, number[]>();
  items.forEach((item, i) => {
    const group = groups.get(item.runId);
    if (group) group.push(i);
    else groups.set(item.runId, [i]);
  });
  return [...groups];
}
