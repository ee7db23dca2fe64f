import { relative } from 'node:path';
import { exportAnnotationSample, scoreAnnotations, type AnnotationRecord } from '@panta/report';
import { EXIT, reportError } from '../errors.js';

const where = (p: string) => relative(process.cwd(), p) || '.';

export async function annotateExportCommand(
  dir: string,
  opts: { n: number; seed?: number; out?: string; judge?: string },
): Promise<number> {
  try {
    const r = await exportAnnotationSample(dir, opts);
    const tags = Object.entries(r.perTag)
      .map(([t, c]) => `${t} ${c.drawn} of ${c.available}`)
      .join(', ');
    process.stdout.write(
      `annotate: ${where(r.out)}: ${r.n} answers over ${r.configurations} configurations, seed ${r.seed} (${tags}); how they were drawn: ${where(r.sidecar)}\n`,
    );
    return EXIT.ok;
  } catch (error) {
    return reportError(error);
  }
}

const pct = (x: number | null) => (x === null ? 'n/a' : `${(100 * x).toFixed(1)}%`);
const kappa = (p: AnnotationRecord['pairs'][number]) => (p.kappa === null ? `undefined (${p.undefinedBecause})` : p.kappa.toFixed(3));

/** The agreement table as text: one line per pair and scope. */
export function agreementText(record: AnnotationRecord): string {
  const lines = record.pairs.map((p) => `${p.a} vs ${p.b}\t${p.scope}\tn ${p.n}\tagreement ${pct(p.agreement)}\tkappa ${kappa(p)}`);
  return `${['pair\tscope\titems\tagreement\tCohen kappa', ...lines].join('\n')}\n`;
}

export async function annotateScoreCommand(dir: string, files: string[]): Promise<number> {
  try {
    const r = await scoreAnnotations(dir, files);
    process.stdout.write(agreementText(r.record));
    process.stdout.write(`annotate: ${r.record.items.length} answers scored; written to ${where(r.written)} (panta report shows it)\n`);
    return EXIT.ok;
  } catch (error) {
    return reportError(error);
  }
}
