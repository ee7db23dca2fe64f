import { describe, expect, it } from 'vitest';
import { HORIZON, ReadyQueue } from '../src/ready-queue.js';
import type { EventPlan } from '../src/schedule.js';

const plan = (event: number, reads: number[] = []): EventPlan => ({
  event,
  sweep: 0,
  agent: event,
  neighbours: new Int32Array(reads.length),
  readVersions: Int32Array.from(reads),
  seed: event,
});

/** A queue over hand-made plans: `plan` registers each as planned, unfinished until taken. */
function queue() {
  const q = new ReadyQueue(64);
  const unfinished = new Map<number, EventPlan>();
  return {
    q,
    planned(p: EventPlan) {
      unfinished.set(p.event, p);
      q.planned(p, (v) => unfinished.get(v));
    },
    take() {
      const p = q.takeOne();
      if (p) unfinished.delete(p.event);
      return p;
    },
  };
}

describe('ReadyQueue.topRank', () => {
  it('is the rank of the event takeOne returns next: the longest chain of planned readers through it', () => {
    const { q, planned, take } = queue();
    expect(q.topRank()).toBe(0);
    const a = plan(0);
    const d = plan(3);
    planned(a);
    q.push(a);
    planned(d);
    q.push(d);
    expect(q.topRank()).toBe(1);
    planned(plan(1, [0])); // reads a: a ranks 2
    expect(q.topRank()).toBe(2);
    planned(plan(2, [1])); // reads the reader of a: a ranks 3
    expect(q.topRank()).toBe(3);
    // a's entries at ranks 1 and 2 are stale now; the answer is unchanged by looking twice.
    expect(q.topRank()).toBe(3);
    expect(take()).toBe(a);
    expect(q.topRank()).toBe(1);
    expect(take()).toBe(d);
    expect(q.topRank()).toBe(0);
  });

  it('stops counting at HORIZON', () => {
    const { q, planned } = queue();
    const head = plan(0);
    planned(head);
    q.push(head);
    for (let e = 1; e < 3 * HORIZON; e++) planned(plan(e, [e - 1]));
    expect(q.topRank()).toBe(HORIZON);
    expect(q.size).toBe(1);
  });
});
