import type { Tag } from '@panta/core';

/**
 * Where verdicts are kept, by VerdictCache.key: a process's own (a file in the corpus, VerdictCache) or one
 * shared by every process of a sweep (Redis, in packages/cluster). Never holds judge_failure: a failed
 * verdict is asked for again at its next encounter, wherever that is.
 */
export interface VerdictStore {
  /** The verdict known for a key: at once when the store holds it in memory, else a promise (undefined: unknown). */
  get(key: string): Tag | undefined | Promise<Tag | undefined>;
  /** Keeps a verdict (the judge never passes judge_failure). */
  set(key: string, tag: Tag): void | Promise<void>;
  /** Lets go of what the store holds open (a file); a later set() opens it again. */
  close?(): void | Promise<void>;
}

/**
 * A process's own store in front of a shared one: a verdict is looked for in the first, then in the second,
 * and one found in the shared store is kept in the own one too (the corpus's judge-cache.jsonl then holds
 * every verdict its rows got, so an embedded resume of that corpus asks for none again).
 */
export class TieredVerdicts implements VerdictStore {
  constructor(
    private readonly own: VerdictStore,
    private readonly shared: VerdictStore,
  ) {}

  get(key: string): Tag | undefined | Promise<Tag | undefined> {
    const known = this.own.get(key);
    if (typeof known === 'string') return known;
    return Promise.resolve(known).then(async (mine) => {
      if (mine) return mine;
      const theirs = await this.shared.get(key);
      if (theirs) await this.own.set(key, theirs);
      return theirs;
    });
  }

  async set(key: string, tag: Tag): Promise<void> {
    await Promise.all([this.own.set(key, tag), this.shared.set(key, tag)]);
  }

  async close(): Promise<void> {
    await Promise.all([this.own.close?.(), this.shared.close?.()]);
  }
}
