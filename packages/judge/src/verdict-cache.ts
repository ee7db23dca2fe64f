import { closeSync, existsSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { normaliseText, type Tag } from '@panta/core';
import type { VerdictStore } from './verdict-store.js';

/**
 * Verdicts by (prompt, normalised response): identical pairs are judged once per sweep, and the cache lives
 * in the corpus (`.state/judge-cache.jsonl`), so a resumed sweep does not pay for them again. Judge
 * failures are not cached: a later encounter asks again. The embedded store; a distributed sweep puts a
 * shared one behind it (TieredVerdicts).
 */
export class VerdictCache implements VerdictStore {
  private readonly verdicts = new Map<string, Tag>();
  /**
   * The file, opened for appending at the first verdict and kept open until close(): an mkdir, an open and a
   * close per verdict cost 24-27 us of CPU against 6.7 for the write alone (bench/NOTES.md: the verdict file
   * kept open). Each line is still written before set() returns, as before.
   */
  private fd?: number;

  constructor(private readonly file?: string) {
    if (file && existsSync(file)) {
      for (const line of readFileSync(file, 'utf8').split('\n')) {
        if (!line.trim()) continue;
        try {
          const { key, tag } = JSON.parse(line) as { key: string; tag: Tag };
          this.verdicts.set(key, tag);
        } catch {
          // a torn last line after a crash: that verdict is asked for again
        }
      }
    }
  }

  static key(promptId: string, response: string): string {
    return `${promptId}\u0000${normaliseText(response)}`;
  }

  get(key: string): Tag | undefined {
    return this.verdicts.get(key);
  }

  get size(): number {
    return this.verdicts.size;
  }

  set(key: string, tag: Tag): void {
    if (tag === 'judge_failure' || this.verdicts.get(key) === tag) return;
    this.verdicts.set(key, tag);
    if (this.file) {
      if (this.fd === undefined) {
        mkdirSync(dirname(this.file), { recursive: true });
        this.fd = openSync(this.file, 'a');
      }
      writeSync(this.fd, `${JSON.stringify({ key, tag })}\n`);
    }
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}
