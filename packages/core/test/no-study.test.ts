import { describe, expect, it } from 'vitest';
import { PROTOCOL_NAMES } from '../src/index.js';

describe('the library names no study', () => {
  it("core's protocol table holds no study's protocol: the belief board study registers its own", () => {
    // Core's tests load no study (test/setup-studies.ts): what is here is the library's own.
    for (const name of ['belief-board', 'board', 'board_inert', 'full', 'sop']) expect(PROTOCOL_NAMES).not.toContain(name);
    expect(PROTOCOL_NAMES).toEqual(expect.arrayContaining(['glauber', 'isolated', 'ssvp', 'drift-policy', 'regenerate']));
  });
});
