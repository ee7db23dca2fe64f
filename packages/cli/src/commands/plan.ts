import { CHARS_PER_TOKEN, campaignCost, type CampaignCost } from '@panta/core';
import { loadSweep } from '@panta/engine';
import { EXIT, reportError } from '../errors.js';
import { formatTable } from '../table.js';

/**
 * `panta plan SPEC`: what a sweep will cost before anything runs. The spec is loaded and checked as
 * `panta run` does (a bad spec is one line, exit 2), nothing is written.
 */
export function planCommand(spec: string, opts: { callsPerS?: number; json?: boolean }): number {
  try {
    const sweep = loadSweep(spec);
    const cost = campaignCost({
      spec: sweep.spec,
      runs: sweep.runs,
      template: sweep.template,
      edgeLists: sweep.edgeLists,
      ...(opts.callsPerS !== undefined ? { callsPerSecond: opts.callsPerS } : {}),
    });
    process.stdout.write(opts.json ? `${JSON.stringify(cost, null, 2)}\n` : planText(sweep.spec.name, sweep.spec.sweeps, cost));
    return EXIT.ok;
  } catch (error) {
    return reportError(error);
  }
}

const int = (x: number) => Math.round(x).toLocaleString('en-US');

/** Seconds as days and hours (a campaign), or minutes and seconds (a test sweep). */
export function formatDuration(seconds: number): string {
  const s = Math.round(seconds);
  if (s >= 86_400) return `${Math.floor(s / 86_400)} d ${Math.floor((s % 86_400) / 3600)} h`;
  if (s >= 3600) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  if (s >= 60) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${s} s`;
}

function planText(name: string, sweeps: number, c: CampaignCost): string {
  const out: string[] = [];
  out.push(
    `${name}: ${int(c.configurations)} configurations, ${int(c.runs)} runs, ${int(c.events)} events (${
      // Team runs (docs/teams.md) have no population context to list.
      c.contexts.length === 0 ? 'team schedules: one event per call' : `${sweeps} sweeps: N initial answers and N updates per sweep per run`
    })`,
  );
  out.push('');
  const priced = c.total.cost !== undefined;
  out.push(
    formatTable(
      ['LLM calls', 'calls', 'prompt tokens', 'completion tokens', ...(priced ? ['cost'] : [])],
      [
        ...c.calls.map((k) => [
          k.atMost ? `${k.kind} (at most)` : k.kind,
          int(k.calls),
          int(k.promptTokens),
          int(k.completionTokens),
          ...(priced ? [k.cost!.toFixed(2)] : []),
        ]),
        [
          'total',
          int(c.total.calls),
          int(c.total.promptTokens),
          int(c.total.completionTokens),
          ...(priced ? [c.total.cost!.toFixed(2)] : []),
        ],
      ],
      [1, 2, 3, 4],
    ),
  );
  out.push('');
  out.push(
    `Answers: ${c.answerTokens} tokens each (max_tokens${c.fixedLength ? ', fixed_length: exact' : ', without fixed_length: a ceiling'}); prompt tokens estimated at ${CHARS_PER_TOKEN} characters a token from the template, the question and the answers each update quotes.`,
  );
  if (c.contexts.length > 0) {
    out.push('');
    out.push(
      formatTable(
        ['geometry', 'N', 'k', 'runs', 'events', 'update prompt tokens'],
        c.contexts.map((x) => [x.geometry, int(x.n), int(x.k), int(x.runs), int(x.events), int(x.updatePromptTokens)]),
        [1, 2, 3, 4, 5],
      ),
    );
  }
  if (c.contextLimit !== undefined && c.contexts.length > 0) {
    const largest = Math.max(...c.contexts.map((x) => x.updatePromptTokens));
    out.push(
      `Largest update prompt: about ${int(largest)} tokens, within max_context_tokens ${int(c.contextLimit)} less the reply (checked with every quoted answer at max_tokens).`,
    );
  }
  out.push('');
  const rate = `${c.callsPerSecond.toLocaleString('en-US')} calls/s${c.assumedRate ? ' (assumed; give yours with --calls-per-s R)' : ''}`;
  const all = c.calls.length > 1 ? `; every call through the same rate: ${formatDuration(c.seconds.all)}` : '';
  out.push(`Time at ${rate}: the agents' calls ${formatDuration(c.seconds.agents)}${all}.`);
  return `${out.join('\n')}\n`;
}
