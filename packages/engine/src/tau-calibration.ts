import { existsSync, readFileSync, statSync, writeFileSync, renameSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { calibrateTau, cdsExceedance, InputError, TAU_GRID, type CdsExceedance, type SweepSpec, type TauCalibration } from '@panta/core';
import { eventsDir, manifestPath, queryRows, readManifest, sqlString, tauCalibrationPath, tmpName } from '@panta/corpus';

/**
 * `panta calibrate-tau CORPUS` and `ssvp: {tau: {calibrate: FP, from: CORPUS}}`. The command reads the gate
 * CDS of every update (sweep >= 1) of one arm (default no-sync) from the event rows, prints the calibration
 * and keeps the distribution in CORPUS/tau-calibration.json, which a spec reads (synchronously, before
 * planning) to take the lowest tau below its own bound. The spec's tau becomes that number before the
 * fingerprint and the manifest are made, so the sweep is the same corpus as one that wrote the number.
 */

/** What tau-calibration.json holds. */
export interface TauCalibrationRecord extends CdsExceedance {
  arm: string;
  /** The encoder whose embeddings the gate CDS was measured on. */
  encoder: string;
  grid: number;
}

const FIX_CORPUS = 'give the folder of a complete corpus with a no-sync arm (the --out of `panta run`)';

/** The gate CDS values of an arm's updates, with the encoder they were measured on. */
export async function readArmCds(dir: string, arm: string): Promise<{ values: number[]; encoder: string; runs: number }> {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new InputError(dir, '', 'no such folder', FIX_CORPUS);
  let manifest: ReturnType<typeof readManifest>;
  try {
    manifest = readManifest(dir);
  } catch (e) {
    throw new InputError(manifestPath(dir), '', `unreadable (${(e as Error).message})`, FIX_CORPUS);
  }
  if (!manifest) throw new InputError(dir, '', 'holds no manifest.json: not a Panta corpus', FIX_CORPUS);
  if (manifest.status !== 'complete')
    throw new InputError(dir, 'status', `the corpus is ${manifest.status}, not complete`, 'finish (or merge) the sweep first');
  const spec = manifest.spec as { ssvp?: { encoder?: string } };
  const encoder = spec.ssvp?.encoder ?? manifest.encoders[0]?.name ?? '';
  const glob = sqlString(`${eventsDir(dir)}/*.parquet`);
  const arms = (await queryRows(`SELECT DISTINCT protocol FROM read_parquet(${glob}) ORDER BY protocol`)).map((r) => String(r.protocol));
  if (!arms.includes(arm))
    throw new InputError(
      dir,
      'protocol',
      `has no run of the arm ${arm} (arms: ${arms.join(', ')})`,
      `run the sweep with protocol: [${arm}, ...], or name one of its arms with --arm`,
    );
  const rows = await queryRows(
    `SELECT divergence, run_id FROM read_parquet(${glob}) WHERE protocol = ${sqlString(arm)} AND role = 'agent' AND sweep >= 1 AND divergence IS NOT NULL`,
  );
  if (rows.length === 0)
    throw new InputError(
      dir,
      'divergence',
      `the ${arm} arm's updates carry no CDS (only no-sync, ssvp and full-broadcast measure it)`,
      'calibrate on a no-sync arm, with --arm no-sync',
    );
  return { values: rows.map((r) => Number(r.divergence)), encoder, runs: new Set(rows.map((r) => r.run_id)).size };
}

/** What tau-calibration.json holds: each calibrated arm's record, by arm. */
export interface TauCalibrationFile {
  arms: Record<string, TauCalibrationRecord>;
}

/** The arm a `{calibrate, from}` without `arm` uses: the paper calibrates on no-sync. */
export const DEFAULT_TAU_ARM = 'no-sync';

/** Parses tau-calibration.json; a file of one record (written before arms were kept apart) is that arm's. */
export function parseTauCalibrationFile(text: string): TauCalibrationFile {
  const doc = JSON.parse(text) as Partial<TauCalibrationFile> & Partial<TauCalibrationRecord>;
  if (doc.arms && typeof doc.arms === 'object') return { arms: doc.arms };
  if (typeof doc.arm === 'string') return { arms: { [doc.arm]: doc as TauCalibrationRecord } };
  throw new Error('neither arms nor an arm');
}

/**
 * Adds (or replaces) an arm's record in CORPUS/tau-calibration.json, keeping the other arms', and writes it
 * whole (a tmp name, then renamed). An unreadable file is replaced.
 */
export function writeTauCalibration(dir: string, record: TauCalibrationRecord): string {
  const file = tauCalibrationPath(dir);
  let kept: TauCalibrationFile = { arms: {} };
  try {
    kept = parseTauCalibrationFile(readFileSync(file, 'utf8'));
  } catch {
    // None yet, or unreadable: this arm's record starts it.
  }
  const doc: TauCalibrationFile = { arms: { ...kept.arms, [record.arm]: record } };
  writeFileSync(tmpName(file), `${JSON.stringify(doc)}\n`);
  renameSync(tmpName(file), file);
  return file;
}

/** Reads and calibrates an arm of a corpus, and keeps its distribution there for specs to use. */
export async function calibrateCorpus(
  dir: string,
  opts: { fp: number; arm: string },
): Promise<{ calibration: TauCalibration; record: TauCalibrationRecord; runs: number; written: string }> {
  const { values, encoder, runs } = await readArmCds(dir, opts.arm);
  const record: TauCalibrationRecord = { arm: opts.arm, encoder, grid: TAU_GRID, ...cdsExceedance(values) };
  const calibration = calibrateTau(record, opts.fp);
  return { calibration, record, runs, written: writeTauCalibration(dir, record) };
}

/** Where a calibrated tau came from (the manifest's `tau_calibration`). */
export interface TauSource {
  /** The corpus folder, absolute. */
  from: string;
  arm: string;
  calibrate: number;
  encoder: string;
  tau: number;
}

/**
 * A spec's tau as a number: itself, or for {calibrate, from, arm} the lowest tau whose false-positive share
 * in the other corpus's stored calibration of that arm (default no-sync) is below `calibrate`, with where
 * it came from. One line naming the spec and field otherwise.
 */
export function resolveTau(spec: SweepSpec, specFile: string, specPath: string): { tau: number; source?: TauSource } {
  const tau = spec.ssvp.tau;
  if (typeof tau === 'number') return { tau };
  const dir = resolve(dirname(specFile), tau.from);
  const file = tauCalibrationPath(dir);
  const field = 'ssvp.tau.from';
  const arm = tau.arm ?? DEFAULT_TAU_ARM;
  const armFlag = arm === DEFAULT_TAU_ARM ? '' : ` --arm ${arm}`;
  if (!existsSync(file))
    throw new InputError(
      specPath,
      field,
      `${dir} has no tau-calibration.json`,
      `run panta calibrate-tau ${tau.from}${armFlag} first (on its ${arm} arm)`,
    );
  // The file parses but cannot be used (damaged, or a record calibrateTau refuses): one message for both.
  const unusable = (e: unknown) =>
    new InputError(specPath, field, `${file} is unusable (${(e as Error).message})`, `run panta calibrate-tau ${tau.from}${armFlag} again`);
  let record: TauCalibrationRecord | undefined;
  let arms: string[];
  try {
    const doc = parseTauCalibrationFile(readFileSync(file, 'utf8'));
    arms = Object.keys(doc.arms);
    record = doc.arms[arm];
  } catch (e) {
    throw unusable(e);
  }
  if (!record)
    throw new InputError(
      specPath,
      tau.arm === undefined ? field : 'ssvp.tau.arm',
      `${file} has no calibration of the arm ${arm} (calibrated: ${arms.join(', ') || 'none'})`,
      `run panta calibrate-tau ${tau.from} --arm ${arm} first${tau.arm === undefined ? `, or name a calibrated arm with ssvp.tau.arm` : ''}`,
    );
  try {
    const value = calibrateTau(record, tau.calibrate).tau;
    return { tau: value, source: { from: dir, arm, calibrate: tau.calibrate, encoder: record.encoder, tau: value } };
  } catch (e) {
    throw unusable(e);
  }
}
