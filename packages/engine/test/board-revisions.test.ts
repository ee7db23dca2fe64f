import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  appendBoardLines,
  BOARD_TOOL_OWN,
  dynamicsArms,
  parseSweepSpec,
  renderBoard,
  resolveBoardRevisions,
  type TeamBoardRow,
} from '@panta/core';
import { queryRows, readManifest, verifyCorpus, writeManifest } from '@panta/corpus';
import { ROOT, tempDir, writeSpec } from '../../../test/helpers.js';
import { runSweep } from '../src/index.js';

const agent = (a: number) => `agent ${a + 1}`;

/** examples/belief-board.yaml, small: five-fact questions through a relay of 3 and a hub of 3, the board arm only. */
function example(team: string): string {
  return readFileSync(join(ROOT, 'examples', 'belief-board.yaml'), 'utf8')
    .replace('backend: {kind: surrogate}', 'backend: {kind: surrogate, scenario: team-facts}')
    .replaceAll('../datasets/claims24.jsonl', `${ROOT}/datasets/multifact26.jsonl`)
    .replace(/^population:\n(?: {2}- .*\n)+/m, '')
    .replace(/^out: .*$/m, '')
    .replace('trials: 4', 'trials: 1\nprompts: [mf01, mf02]')
    .replace('protocol: [glauber, board, board_inert, full, sop, table, extract, down]', 'protocol: [board]')
    .replace('team: {board_tokens: 256}', team);
}

describe("the board's revisions: the author changing its own mind (the paper's), or the object's latest entry (team.revisions)", () => {
  it('author: a line revises its own latest entry on the object; another member on the same object stands beside it', () => {
    const a = appendBoardLines([], { event: 0, step: 0, author: 0 }, [{ object: 'part 1', claim: 'Paris', confidence: 0.9 }], 'author');
    const b = appendBoardLines(a, { event: 1, step: 1, author: 1 }, [{ object: 'Part 1', claim: 'Lyon', confidence: 0.6 }], 'author');
    expect(b.map((e) => e.revises)).toEqual([null]);
    const again = appendBoardLines(
      [...a, ...b],
      { event: 2, step: 2, author: 0 },
      [{ object: 'PART 1', claim: 'Nice', confidence: 0.7 }],
      'author',
    );
    expect(again.map((e) => [e.id, e.revises])).toEqual([['e2.0', 'e0.0']]);
    // The old rule, as corpora from before the option were run: B's line revises A's entry.
    expect(
      appendBoardLines(a, { event: 1, step: 1, author: 1 }, [{ object: 'Part 1', claim: 'Lyon', confidence: 0.6 }]).map((e) => e.revises),
    ).toEqual(['e0.0']);
    // Rendered: each member's own latest claim, the revision marked with the claim its author gave up.
    const board = renderBoard([...a, ...b, ...again], 256, agent, 'author');
    expect(board.lines.slice(1)).toEqual([
      '- [e1.0] agent 2 on Part 1: Lyon (confidence 0.6)',
      '- [e2.0] agent 1 on PART 1: Nice (confidence 0.7) [revised; was "Paris"]',
    ]);
    expect(renderBoard([...a, ...b], 256, agent).lines.slice(1)).toEqual(['- [e1.0] agent 2 on Part 1: Lyon (confidence 0.6)']);
  });

  it('a new sweep resolves author and stores it; one that says object, or has no board arm, is left as it is', () => {
    const spec = parseSweepSpec(readFileSync(join(ROOT, 'examples', 'belief-board.yaml'), 'utf8'), 'belief-board.yaml');
    expect(spec.team?.revisions).toBeUndefined();
    resolveBoardRevisions(spec, dynamicsArms(spec));
    expect(spec.team).toEqual({ memory: 'all', board_tokens: 256, revisions: 'author' });
    const old = parseSweepSpec(example('team: {revisions: object}'), 'old.yaml');
    resolveBoardRevisions(old, dynamicsArms(old));
    expect(old.team?.revisions).toBe('object');
    const plain = parseSweepSpec(
      example('team: {board_tokens: 256}')
        .replace('protocol: [board]', 'protocol: [glauber]')
        .replace(/^team: .*\n/m, ''),
      'plain.yaml',
    );
    resolveBoardRevisions(plain, dynamicsArms(plain));
    expect(plain.team).toBeUndefined();
  });

  it("runs with the author rule by default and verifies; a corpus from before the option (no key: object) still verifies and is not resumed by today's YAML", async () => {
    const dir = tempDir();
    const fresh = join(dir, 'fresh');
    const today = writeSpec(dir, example('team: {board_tokens: 256}'), 'today.yaml');
    expect((await runSweep(today, { out: fresh, logLevel: 'silent' })).status).toBe('complete');
    expect((readManifest(fresh)!.spec as { team?: { revisions?: string } }).team?.revisions).toBe('author');
    expect((await verifyCorpus(fresh)).problems).toEqual([]);
    const rows = (await queryRows(
      `SELECT e.run_id, e.agent::INTEGER AS agent, e.board FROM read_parquet('${fresh}/events/*.parquet') e WHERE e.board IS NOT NULL ORDER BY e.run_id, e.event`,
    )) as { run_id: string; board: string }[];
    const authors = new Map<string, number>();
    let revisions = 0;
    for (const r of rows)
      for (const e of (JSON.parse(r.board) as TeamBoardRow).entries) {
        if (e.revises !== null) {
          revisions++;
          expect(authors.get(`${r.run_id}/${e.revises}`)).toBe(e.author);
        }
        authors.set(`${r.run_id}/${e.id}`, e.author);
      }
    expect(rows.length, JSON.stringify(rows.slice(0, 3))).toBeGreaterThan(0);
    expect(authors.size).toBeGreaterThan(0);
    expect(revisions).toBeGreaterThanOrEqual(0);
    // The old rule, stored as a corpus from before the key: it verifies, and today's YAML is another corpus.
    const old = join(dir, 'old');
    expect(
      (
        await runSweep(writeSpec(dir, example('team: {board_tokens: 256, revisions: object}'), 'old.yaml'), {
          out: old,
          logLevel: 'silent',
        })
      ).status,
    ).toBe('complete');
    const manifest = readManifest(old)!;
    delete (manifest.spec as { team: { revisions?: string } }).team.revisions;
    writeManifest(old, manifest);
    expect((await verifyCorpus(old)).problems).toEqual([]);
    await expect(runSweep(today, { out: old, logLevel: 'silent' })).rejects.toThrow(/holds a corpus of a different sweep/);
    expect(BOARD_TOOL_OWN).toMatch(/your own entry/);
  }, 60_000);
});
