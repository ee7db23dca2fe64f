import { rmSync } from 'node:fs';
import { basename } from 'node:path';
import { mergeParts, mergeTempFolder } from '@panta/engine';
import { EXIT, reportError } from '../errors.js';
import { summaryTable } from '../table.js';

export async function mergeCommand(out: string, parts: string[]): Promise<number> {
  const started = Date.now();
  // Ctrl-C (or SIGTERM): the merge builds its corpus in a hidden folder next to OUT and renames it at the
  // end, so stopping removes that folder and leaves OUT and the parts as they were; nothing is lost.
  let finished = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (finished) return;
    const tmp = mergeTempFolder(out);
    rmSync(tmp, { recursive: true, force: true });
    process.stderr.write(
      `\npanta: ${signal === 'SIGTERM' ? 'terminated' : 'interrupted'}: merge stopped; removed its unfinished ${basename(tmp)}, ${out} is not written and the parts are unchanged: run the same command to merge again\n`,
    );
    process.exit(signal === 'SIGTERM' ? 143 : EXIT.interrupted);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const summary = await mergeParts(out, parts, {
      onPlan: (plan) =>
        process.stderr.write(
          `panta: merging ${plan.parts} parts: ${plan.runs} runs, ${plan.events.toLocaleString('en-US')} events -> ${plan.out}\n`,
        ),
      onLeftovers: (removed) =>
        process.stderr.write(
          `panta: removed ${removed.length === 1 ? 'the unfinished folder of an interrupted merge' : `${removed.length} unfinished folders of interrupted merges`}: ${removed.join(', ')}\n`,
        ),
    });
    finished = true;
    const seconds = (Date.now() - started) / 1000;
    if (summary.final.length > 0) process.stdout.write(`\nfinal sweep, mean over trials:\n${summaryTable(summary.final)}\n\n`);
    process.stdout.write(
      `${summary.status}: ${summary.runsComplete}/${summary.runsPlanned} runs, ${summary.eventsWritten.toLocaleString('en-US')} events merged and measured in ${seconds.toFixed(1)} s; corpus: ${summary.out}\n`,
    );
    return summary.status === 'complete' ? EXIT.ok : EXIT.failed;
  } catch (error) {
    return reportError(error);
  } finally {
    finished = true;
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
