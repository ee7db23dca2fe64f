import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { SweepProgress } from '@panta/engine';
import { ProgressView, progressLine } from '../src/progress.js';

/** A progress report of a large run a few seconds in: calls answered, no part written yet. */
const EARLY: SweepProgress = {
  eventsWritten: 0,
  eventsExecuted: 523_456,
  inflight: 256,
  calls: 523_456,
  tokens: 9_000_000,
  completionTokens: 2_000_000,
  retries: 0,
  runsActive: 1,
  runsFinished: 0,
  runsFailed: 0,
  eventsSkipped: 0,
  eventsTotal: 11_000_000,
  runsTotal: 1,
  eventsOnDisk: 0,
};

describe('progress line', () => {
  it('counts events executed and written apart, with separators', () => {
    const line = progressLine(EARLY, { events: 178_000.4, calls: 178_000, tokens: 712_000, eta: 61.2 });
    expect(line).toBe(
      'events executed 523,456/11,000,000, written 0 | 178,000 ev/s | calls in flight 256, 178,000/s | 712,000 tok/s | runs 0/1 | ETA 1m01s',
    );
  });

  it('says -- for rates and ETA before there is signal', () => {
    const line = progressLine({ ...EARLY, eventsExecuted: 0, inflight: 12 }, {});
    expect(line).toBe('events executed 0/11,000,000, written 0 | -- ev/s | calls in flight 12, --/s | -- tok/s | runs 0/1 | ETA --');
  });

  it("while requests hang, names how many are open and the oldest one's age", () => {
    const hung = { ...EARLY, eventsExecuted: 0, inflight: 12, callsOpen: 12, oldestCallS: 95 };
    expect(progressLine(hung, {})).toBe(
      'events executed 0/11,000,000, written 0 | -- ev/s | calls in flight 12, --/s (12 calls open, oldest 95 s) | -- tok/s | runs 0/1 | ETA --',
    );
    // Calls a few seconds old are a served model's pace, not a hang.
    expect(progressLine({ ...hung, oldestCallS: 2 }, {})).not.toContain('oldest');
  });

  it('a view on a plain stream writes its first line at once, with both counts', () => {
    let text = '';
    const stream = new Writable({
      write(chunk, _encoding, done) {
        text += String(chunk);
        done();
      },
    }) as unknown as NodeJS.WriteStream;
    const view = new ProgressView(stream);
    view.update({ ...EARLY, eventsWritten: 8_192 });
    view.stop();
    expect(text).toBe(
      'events executed 523,456/11,000,000, written 8,192 | -- ev/s | calls in flight 256, --/s | -- tok/s | runs 0/1 | ETA --\n',
    );
  });
});
