import { verifyCorpus } from '@panta/corpus';
import { EXIT, reportError } from '../errors.js';

export async function verifyCommand(dir: string): Promise<number> {
  try {
    const report = await verifyCorpus(dir);
    for (const p of report.problems) process.stdout.write(`problem: ${p}\n`);
    process.stdout.write(
      report.ok ? `ok: ${dir} is complete and consistent (${report.checked})\n` : `not ok: ${report.problems.length} problems in ${dir}\n`,
    );
    for (const n of report.notes) process.stdout.write(`note: ${n}\n`);
    return report.ok ? EXIT.ok : EXIT.failed;
  } catch (error) {
    return reportError(error);
  }
}
