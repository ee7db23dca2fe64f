import { relative, resolve } from 'node:path';
import type { TauCalibration } from '@panta/core';
import { calibrateCorpus } from '@panta/engine';
import { EXIT, reportError } from '../errors.js';

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
/** A path relative to the working directory when it lies below it, else absolute. */
const shown = (p: string) => (relative(process.cwd(), p).startsWith('..') ? p : relative(process.cwd(), p));

/** The calibration as text: the table (the chosen tau marked), then the choice in words. */
export function calibrationText(c: TauCalibration, what: { dir: string; arm: string; encoder: string; runs: number }): string {
  const lines = [
    `calibrate-tau: ${what.dir}: arm ${what.arm}, ${c.observations} updates of ${what.runs} runs, gate CDS on encoder ${what.encoder}`,
    'tau\tabove tau\tfalse-positive share',
    ...c.table.map((r) => `${r.tau.toFixed(2)}${r.tau === c.tau ? ' *' : ''}\t${r.count}\t${pct(r.share)}`),
    `tau = ${c.tau.toFixed(2)}: the lowest tau (step 0.01) whose false-positive share (${what.arm} updates whose CDS exceeds it) is below ${pct(c.fp)}`,
  ];
  return `${lines.join('\n')}\n`;
}

export async function calibrateTauCommand(dir: string, opts: { fp: number; arm: string }): Promise<number> {
  try {
    const r = await calibrateCorpus(dir, opts);
    process.stdout.write(calibrationText(r.calibration, { dir, arm: opts.arm, encoder: r.record.encoder, runs: r.runs }));
    // `from` is read relative to the spec file's folder: the absolute path works from any spec.
    const arm = opts.arm === 'no-sync' ? '' : `, arm: ${opts.arm}`;
    process.stdout.write(
      `calibrate-tau: the ${opts.arm} arm's distribution is kept in ${shown(r.written)} (beside other arms'); a spec uses it with ssvp: {tau: {calibrate: ${opts.fp}, from: ${resolve(dir)}${arm}}}\n`,
    );
    return EXIT.ok;
  } catch (error) {
    return reportError(error);
  }
}
