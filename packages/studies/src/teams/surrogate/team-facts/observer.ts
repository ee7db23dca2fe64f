import { objectKey } from '@panta/core';
import { lineAfter, type TeamView } from '@panta/llm';
import { boardView, partObject } from './board.js';

/**
 * The surrogate's observer and extractor (paper 001's belief table and its `extract` baseline; docs/teams.md),
 * read from the prompt's text as a server would. The observer reads the member's whole reply (its trace) and
 * the table so far: an OBSERVATION per part of the answer the trace states that the table lacks or states
 * otherwise (a revision), and a BELIEF on whether the answer is ready when the trace says how many parts are
 * open and the table says otherwise. The extractor states the parts the trace holds, in one line.
 */
const TRACE = /^Trace of (?:agent \d+|worker \d+|orchestrator): /;
/** What a trace says before its counts (sop: its verdict), and the relay note's count of open parts. */
const SAID = /\. (?:Open|Evidence): /;
const OPEN = /Open: (\d+) of (\d+) parts\./;
export const READY_OBJECT = 'answer ready';

function traceOf(view: TeamView): string {
  return lineAfter(view.lines, TRACE) ?? '';
}

/** Per part, the value a trace states (before its counts), or null. */
function statedParts(trace: string, known: (text: string) => (string | null)[]): (string | null)[] {
  return known(trace.split(SAID)[0]);
}

export function observerReply(view: TeamView, known: (text: string) => (string | null)[]): string {
  const trace = traceOf(view);
  const table = boardView(view).shown;
  const out: string[] = [];
  statedParts(trace, known).forEach((k, i) => {
    if (k === null || table.get(objectKey(partObject(i))) === k) return;
    out.push(`OBSERVATION: ${partObject(i)} | ${k} | 0.9`);
  });
  const open = OPEN.exec(trace);
  if (open) {
    const stance = open[1] === '0' ? 'yes, every part found' : `no, ${open[1]} of ${open[2]} parts open`;
    if (table.get(objectKey(READY_OBJECT)) !== stance) out.push(`BELIEF: ${READY_OBJECT} | ${stance} | 0.7`);
  }
  return out.length > 0 ? out.join('\n') : 'Nothing new.';
}

export function extractorReply(view: TeamView, known: (text: string) => (string | null)[], list: (k: (string | null)[]) => string): string {
  return `Established: ${list(statedParts(traceOf(view), known))}.`;
}
