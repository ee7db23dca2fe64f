// bench/early-stopping: the quickstart run twice in one process, with every sweep and with early stopping
// (the spec's defaults), from the same seeds. Prints the share of calls saved and how far each run's final
// magnetisation and rho (whitened, as order_params.parquet holds them) land from the full run's.
// Goal: at least 40% of calls saved, final m and rho within 0.02 of the full runs' (mean over runs).
// Run after a build: node bench/early-stopping.mjs [SPEC]
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { runSweep } from '@panta/engine';
// Every study registered (its scenarios, protocols and tables), as every `panta` command does.
import '@panta/studies';
import { benchArgs } from './lib/args.mjs';

const { positionals } = benchArgs(import.meta.filename, '[SPEC]  (default examples/quickstart.yaml)', {}, { positional: 'SPEC' });
const spec = resolve(positionals[0] ?? resolve(import.meta.dirname, '..', 'examples', 'quickstart.yaml'));
const dir = mkdtempSync(join(tmpdir(), 'panta-early-'));
// The early-stopping spec sits next to the original, so its relative dataset path still resolves.
const earlySpec = join(dirname(spec), `.bench-early-${process.pid}.yaml`);
writeFileSync(earlySpec, `${readFileSync(spec, 'utf8').replace(/^early_stopping:.*$/m, '')}\nearly_stopping: {}\n`);

try {
  const timed = async (file, out) => {
    const t0 = performance.now();
    await runSweep(file, { out, logLevel: 'silent' });
    return (performance.now() - t0) / 1000;
  };
  const full = join(dir, 'full');
  const early = join(dir, 'early');
  const tFull = await timed(spec, full);
  const tEarly = await timed(earlySpec, early);
  const con = await (await DuckDBInstance.create()).connect();
  const rows = async (sql) => (await con.runAndReadAll(sql)).getRowObjectsJson();
  const [calls] =
    await rows(`SELECT sum(f.calls) AS full_calls, sum(e.calls) AS early_calls, sum(e.calls_saved) AS saved, count(*) FILTER (WHERE e.stopped_early) AS stopped, count(*) AS runs, avg(e.sweeps_run) AS mean_stop
    FROM read_parquet('${full}/runs.parquet') f JOIN read_parquet('${early}/runs.parquet') e USING (run_id)`);
  const [diff] =
    await rows(`WITH e AS (SELECT run_id, magnetisation AS m, rho FROM read_parquet('${early}/order_params.parquet') QUALIFY sweep = max(sweep) OVER (PARTITION BY run_id, encoder)),
    f AS (SELECT run_id, magnetisation AS m, rho FROM read_parquet('${full}/order_params.parquet') QUALIFY sweep = max(sweep) OVER (PARTITION BY run_id, encoder))
    SELECT avg(abs(e.m - f.m)) AS dm, max(abs(e.m - f.m)) AS dm_max, avg(abs(coalesce(e.rho, 0) - coalesce(f.rho, 0))) AS drho, max(abs(coalesce(e.rho, 0) - coalesce(f.rho, 0))) AS drho_max FROM e JOIN f USING (run_id)`);
  const share = Number(calls.saved) / Number(calls.full_calls);
  console.log(
    `early stopping on ${spec.split('/').slice(-2).join('/')} (defaults: window 2, tolerance 0.04, rho_tolerance 0.03, min_sweeps 2):`,
  );
  console.log(
    `  full runs: ${Number(calls.full_calls).toLocaleString('en-US')} calls in ${tFull.toFixed(1)} s; early stopping: ${Number(calls.early_calls).toLocaleString('en-US')} calls in ${tEarly.toFixed(1)} s`,
  );
  console.log(
    `  ${calls.stopped} of ${calls.runs} runs stopped early (mean last sweep ${Number(calls.mean_stop).toFixed(2)}); calls saved: ${(100 * share).toFixed(1)}% (goal: >= 40%)`,
  );
  console.log(
    `  final magnetisation vs full run: mean |diff| ${Number(diff.dm).toFixed(4)} (max ${Number(diff.dm_max).toFixed(3)}); rho: mean |diff| ${Number(diff.drho).toFixed(4)} (max ${Number(diff.drho_max).toFixed(3)}) (goal: <= 0.02)`,
  );
} finally {
  rmSync(earlySpec, { force: true });
  rmSync(dir, { recursive: true, force: true });
}
