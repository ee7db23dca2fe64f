import { relative } from 'node:path';
import { writeReport } from '@panta/report';
// Every study's report sections (loaded here only: they load the chart renderer, which no other command needs).
import '@panta/studies/report';
import { EXIT, reportError } from '../errors.js';

export async function reportCommand(
  dir: string,
  opts: { out?: string; excludePrompts?: string[]; compare?: string[]; judge?: string; spread?: 'sd' | 'se' },
): Promise<number> {
  try {
    const r = await writeReport(dir, {
      out: opts.out,
      excludePrompts: opts.excludePrompts,
      compare: opts.compare,
      judge: opts.judge,
      spread: opts.spread,
    });
    const where = (p: string) => relative(process.cwd(), p) || '.';
    for (const note of r.notes)
      process.stderr.write(note.startsWith('Warning: ') ? `panta: warning: ${note.slice(9)}\n` : `panta: note: ${note}\n`);
    process.stdout.write(
      `report: ${where(r.index)} (${r.figures.length} figures as SVG and PNG in ${where(`${r.out}/figures`)}, ${r.tables.length} tables)\n`,
    );
    return EXIT.ok;
  } catch (error) {
    return reportError(error);
  }
}
