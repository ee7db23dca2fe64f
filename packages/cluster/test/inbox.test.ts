import { describe, expect, it } from 'vitest';
import {
  InboxEntryError,
  decodeCollectorMessage,
  decodeSchedulerMessage,
  encodeCollectorMessage,
  encodeSchedulerMessage,
  type CollectorMessage,
  type SchedulerMessage,
} from '../src/redis/inbox.js';

const scheduler: SchedulerMessage[] = [
  {
    op: 'done',
    items: [
      { run: 'r0', event: 12, calls: 2, tokens: 340 },
      { run: 'r1', event: 0, calls: 0, tokens: 0 },
    ],
  },
  { op: 'failed', run: 'r0', event: 3, error: 'HTTP 500 after 5 tries' },
  { op: 'boundaryFailed', run: 'r1', sweep: 2, error: 'judge timed out' },
  { op: 'boundary', run: 'r1', sweep: 2, outcome: '{"stop":true,"measure":0.4}' },
  { op: 'opened', run: 'r2', next: 0, finalized: false },
  { op: 'opened', run: 'r2', next: 96, finalized: true, control: { sweep: 1, state: { history: [], mean0: [0.5], stop: false } } },
  { op: 'closed', run: 'r2' },
  { op: 'written', counts: { r0: 13, r2: 96 } },
];

const collector: CollectorMessage[] = [
  { op: 'done', items: [{ run: 'r0', event: 12 }] },
  { op: 'boundary', run: 'r1', sweep: 2 },
  { op: 'open', run: 'r2' },
  { op: 'close', run: 'r2', status: 'complete', wallMs: 1234.5 },
  { op: 'close', run: 'r3', status: 'failed', wallMs: 20, error: 'event 4 failed' },
  { op: 'finish' },
  { op: 'rows', run: 'r4' },
];

describe('inbox messages', () => {
  it('every scheduler message decodes to what was encoded', () => {
    for (const m of scheduler) expect(decodeSchedulerMessage('s', '1-0', encodeSchedulerMessage(m))).toEqual(m);
  });

  it('every collector request decodes to what was encoded', () => {
    for (const m of collector) expect(decodeCollectorMessage('c', '1-0', encodeCollectorMessage(m))).toEqual(m);
  });

  it('a failed boundary travels as op failed with a sweep, as the Lua step writes it', () => {
    expect(encodeSchedulerMessage({ op: 'boundaryFailed', run: 'r1', sweep: 2, error: 'x' })).toEqual([
      'op',
      'failed',
      'run',
      'r1',
      'sweep',
      '2',
      'error',
      'x',
    ]);
  });

  it('a malformed entry is an InboxEntryError naming the stream, the entry and the field', () => {
    const cases: [string[], string, RegExp][] = [
      [['op', 'done', 'run', 'r0'], 'items', /field 'items' is missing/],
      [
        ['op', 'done', 'items', '[["r0","x7",1,2]]'],
        'items',
        /field 'items' holds \["r0","x7",1,2\], not \[run, 3 non-negative integers\]/,
      ],
      [['op', 'done', 'items', '{"r0":1}'], 'items', /field 'items' is not a JSON list/],
      [['op', 'failed', 'run', 'r0', 'event', 'x7', 'error', 'e'], 'event', /field 'event' is 'x7', not a non-negative integer/],
      [['op', 'opened', 'run', 'r0', 'next', '3', 'finalized', 'yes'], 'finalized', /field 'finalized' is 'yes', not one of 0, 1/],
      [['op', 'written', 'counts', '{r0:'], 'counts', /field 'counts' is not JSON/],
      [['op', 'hello'], 'op', /field 'op' is 'hello', not one of done, failed/],
      [['run', 'r0'], 'op', /field 'op' is missing/],
    ];
    for (const [flat, field, message] of cases) {
      const error = (() => {
        try {
          decodeSchedulerMessage('panta:s:inbox:scheduler', '17-3', flat);
        } catch (e) {
          return e;
        }
      })();
      expect(error).toBeInstanceOf(InboxEntryError);
      expect((error as InboxEntryError).field).toBe(field);
      expect((error as Error).message).toMatch(/^inbox panta:s:inbox:scheduler, entry 17-3: /);
      expect((error as Error).message).toMatch(message);
    }
    expect(() => decodeCollectorMessage('c', '1-0', ['op', 'close', 'run', 'r0', 'status', 'done', 'wall_ms', '1'])).toThrow(
      /field 'status' is 'done', not one of complete, failed, stopped/,
    );
  });
});
