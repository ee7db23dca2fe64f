import { describe, expect, it } from 'vitest';
import { PantaMetrics } from '../src/metrics.js';

describe('panta_events_executed', () => {
  it('is a gauge next to panta_events_written, and absent until a source reports it', async () => {
    const metrics = new PantaMetrics('run');
    metrics.observe('s', { eventsWritten: 0, eventsTotal: 11_000_000 }, 0);
    expect(await metrics.text()).not.toMatch(/^panta_events_executed\{/m);
    metrics.observe('s', { eventsWritten: 8192, eventsExecuted: 523_456, eventsTotal: 11_000_000 }, 1000);
    const text = await metrics.text();
    expect(text).toContain('# TYPE panta_events_executed gauge');
    expect(text).toMatch(/^panta_events_executed\{sweep="s",role="run"\} 523456$/m);
    expect(text).toMatch(/^panta_events_written\{sweep="s",role="run"\} 8192$/m);
  });
});
