import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { RunPlan } from '@panta/core';
import { addedTables } from './corpus-tables.js';

/** Every table a study added whose runs the sweep has: present, and as its own check recomputes it. */
export async function checkAddedTables(out: string, runs: readonly RunPlan[]): Promise<string[]> {
  const problems: string[] = [];
  for (const table of addedTables()) {
    if (!table.applies(runs)) continue;
    if (!existsSync(join(out, table.file))) {
      if (!table.optional) problems.push(`${table.file} is missing`);
    } else problems.push(...(await table.check(out, runs)));
  }
  return problems;
}
