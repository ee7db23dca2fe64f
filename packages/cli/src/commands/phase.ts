import { formatEstimate, formatTemperature, phaseDiagram, type PhaseFamily } from '@panta/core';
import { readPhaseTable } from '@panta/corpus';
import { EXIT, reportError } from '../errors.js';

const num = formatTemperature;

function familyTitle(f: PhaseFamily): string {
  const arms = [f.template_arm && `template ${f.template_arm}`, f.population_arm && `population ${f.population_arm}`].filter(Boolean);
  return [`${f.geometry}`, `prompt ${f.prompt_id}`, `encoder ${f.encoder}`, f.protocol, f.dynamics, ...arms].join(' · ');
}

/** The text `panta phase` prints for one family. */
export function familyLines(f: PhaseFamily): string[] {
  const ts = f.temperatures;
  const lines = [
    familyTitle(f),
    `  sizes N = ${f.sizes.join(', ')}; ${ts.length} temperatures ${num(ts[0])}..${num(ts[ts.length - 1])}`,
    `  T_c (Binder crossing${f.sizes.length > 1 ? `, N=${f.tc_binder.sizes.join('/')}` : ''}): ${formatEstimate(f.tc_binder)}`,
  ];
  if (f.crossings.length > 1) for (const c of f.crossings) lines.push(`    N=${c.sizes.join('/')}: ${formatEstimate(c)}`);
  lines.push(`  T_c (chi peak, N=${f.tc_chi.n}): ${formatEstimate(f.tc_chi)}`);
  if (f.chi_peaks.length > 1) for (const c of f.chi_peaks) lines.push(`    N=${c.n}: ${formatEstimate(c)}`);
  lines.push('  T* (lowest rho):');
  for (const s of f.t_star) lines.push(`    N=${s.n}: ${formatEstimate(s)}`);
  if (f.not_equilibrated.length > 0)
    lines.push(
      `  not equilibrated (plateau halves or trials disagree): ${f.not_equilibrated.map((p) => `N=${p.n} T=${p.temperature}${p.observables.length === 1 ? ` (${p.observables[0]} only)` : ''}`).join(', ')}`,
    );
  return lines;
}

/** `panta phase CORPUS [--json]`: the transition temperatures and T* of each family of configurations. */
export async function phaseCommand(dir: string, opts: { json?: boolean }): Promise<number> {
  try {
    const diagram = phaseDiagram(await readPhaseTable(dir));
    if (opts.json) process.stdout.write(`${JSON.stringify({ corpus: dir, families: diagram })}\n`);
    else if (diagram.length === 0) process.stdout.write(`${dir}: no configuration has order parameters (team runs only)\n`);
    else process.stdout.write(`${diagram.flatMap((f) => familyLines(f)).join('\n')}\n`);
    return EXIT.ok;
  } catch (error) {
    return reportError(error);
  }
}
