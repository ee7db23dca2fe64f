import { createHash } from 'node:crypto';
import type { Tag } from '@panta/core';
import type { VerdictStore } from '@panta/judge';
import type { Redis } from 'ioredis';

const TAGS: ReadonlySet<string> = new Set<Tag>(['correct', 'hallucinated', 'not_known']);

/** Verdicts remembered per process: a population repeats its answers, Redis is asked once for each. */
const MEMO_ENTRIES = 100_000;

/**
 * The LLM judge's verdicts shared by every process of a sweep (the collectors and the workers' boundary
 * judges): one Redis hash per sweep (keys.ts `verdicts`), a field per (prompt, normalised answer). A field is
 * a 128-bit digest of the judge's key, not the answer itself: a sweep of real models holds millions of
 * distinct answers, and Redis keeps all of them in memory. judge_failure is never stored (the judge does not
 * pass it): whoever meets the pair next asks again.
 */
export class RedisVerdicts implements VerdictStore {
  private readonly memo = new Map<string, Tag>();

  constructor(
    private readonly redis: Redis,
    private readonly hash: string,
  ) {}

  static field(key: string): string {
    return createHash('sha256').update(key).digest('base64url').slice(0, 22);
  }

  get(key: string): Tag | Promise<Tag | undefined> {
    const known = this.memo.get(key);
    if (known) return known;
    return this.redis.hget(this.hash, RedisVerdicts.field(key)).then((value) => {
      // Anything but a verdict (a field another version wrote) is no verdict: the pair is judged again.
      if (value === null || !TAGS.has(value)) return undefined;
      this.remember(key, value as Tag);
      return value as Tag;
    });
  }

  async set(key: string, tag: Tag): Promise<void> {
    if (!TAGS.has(tag)) return;
    this.remember(key, tag);
    await this.redis.hset(this.hash, RedisVerdicts.field(key), tag);
  }

  private remember(key: string, tag: Tag): void {
    if (this.memo.size >= MEMO_ENTRIES) this.memo.clear();
    this.memo.set(key, tag);
  }
}
