import { mergeParts } from '@panta/engine';
import { EXIT, reportError } from '../errors.js';
import { summaryTable } from '../table.js';

export async function mergeCommand(out: string, parts: string[]): Promise<number> {
  const started = Date.now();
  try {
    const summary = await mergeParts(out, parts, {
      onPlan: (plan) =>
        process.stderr.write(
          `panta: merging ${plan.parts} parts: ${plan.runs} runs, ${plan.events.toLocaleString('en-US')} events -> ${plan.out}\n`,
        ),
    });
    const seconds = (Date.now() - started) / 1000;
    if (summary.final.length > 0) process.stdout.write(`\nfinal sweep, mean over trials:\n${summaryTable(summary.final)}\n\n`);
    process.stdout.write(
      `${summary.status}: ${summary.runsComplete}/${summary.runsPlanned} runs, ${summary.eventsWritten.toLocaleString('en-US')} events merged and measured in ${seconds.toFixed(1)} s; corpus: ${summary.out}\n`,
    );
    return summary.status === 'complete' ? EXIT.ok : EXIT.failed;
  } catch (error) {
    return reportError(error);
  }
}
