import { describe, expect, it } from 'vitest';
import { gatedWrite, parquetWriteSlots } from '../src/copy-gate.js';

describe('the Parquet write gate', () => {
  it('runs at most parquetWriteSlots() writes at once, in the order they asked, and frees a slot on failure', async () => {
    const slots = parquetWriteSlots();
    expect(slots).toBeGreaterThanOrEqual(2);
    let running = 0;
    let most = 0;
    const started: number[] = [];
    const releases: (() => void)[] = [];
    const write = (i: number, fail = false) =>
      gatedWrite(async () => {
        started.push(i);
        running++;
        most = Math.max(most, running);
        await new Promise<void>((resolve) => releases.push(resolve));
        running--;
        if (fail) throw new Error(`write ${i} failed`);
        return i;
      });
    const total = slots + 3;
    const results = Array.from({ length: total }, (_, i) => write(i, i === 0).catch((e: Error) => e.message));
    // Let the writes that got a slot start; the rest wait.
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual(Array.from({ length: slots }, (_, i) => i));
    // Release writes one by one: each freed slot goes to the next in line, the failed first write included.
    while (releases.length > 0) {
      releases.shift()!();
      await new Promise((r) => setImmediate(r));
    }
    expect(await Promise.all(results)).toEqual(['write 0 failed', ...Array.from({ length: total - 1 }, (_, i) => i + 1)]);
    expect(started).toEqual(Array.from({ length: total }, (_, i) => i));
    expect(most).toBe(slots);
  });
});
