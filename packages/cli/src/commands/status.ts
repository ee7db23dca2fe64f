import { readStatus, redisUrl } from '@panta/cluster';
import { EXIT, reportError } from '../errors.js';

export async function statusCommand(opts: { redis?: string; json?: boolean }): Promise<number> {
  try {
    const status = await readStatus(redisUrl(opts.redis));
    if (opts.json) {
      process.stdout.write(`${JSON.stringify(status, null, 2)}\n`);
      return EXIT.ok;
    }
    const q = status.queue;
    const lines = [`queue: ${q.waiting} waiting, ${q.active} active, ${q.delayed} delayed, ${q.failed} failed`];
    if (status.sweeps.length === 0) lines.push('no sweep published to this Redis');
    for (const s of status.sweeps) {
      const pct = s.eventsTotal > 0 ? ((100 * s.eventsWritten) / s.eventsTotal).toFixed(1) : '0';
      const age =
        s.phase === 'done'
          ? 'corpus written'
          : s.schedulerExited
            ? 'scheduler exited'
            : s.schedulerAge === null
              ? 'no scheduler report yet'
              : s.schedulerAge > 5
                ? `scheduler silent for ${s.schedulerAge.toFixed(0)} s`
                : 'scheduler live';
      lines.push(
        '',
        `sweep ${s.id} (${s.phase}; ${age})`,
        `  events ${s.eventsWritten.toLocaleString('en-US')}/${s.eventsTotal.toLocaleString('en-US')} (${pct}%), ${s.inflight} in flight, ${s.eventsPerSecond.toFixed(1)} events/s, ${s.calls.toLocaleString('en-US')} calls this session, ${s.requeued} requeued`,
        `  runs ${s.runsFinished}/${s.runsTotal} finished, ${s.runsActive} open`,
      );
      if (s.round) lines.push(`  adaptive temperatures: round ${s.round.index} of ${s.round.of} (0: the start grid)`);
      if (s.runs.length > 0) {
        const width = Math.max(...s.runs.map((r) => r.run.length));
        lines.push(`  ${'run'.padEnd(width)}  written  in flight  failed`);
        for (const r of s.runs)
          lines.push(
            `  ${r.run.padEnd(width)}  ${String(r.written).padStart(7)}  ${String(r.inflight).padStart(9)}  ${r.failed ?? ''}`.trimEnd(),
          );
      }
    }
    process.stdout.write(`${lines.join('\n')}\n`);
    return EXIT.ok;
  } catch (error) {
    return reportError(error);
  }
}
