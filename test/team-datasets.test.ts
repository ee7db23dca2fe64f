import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseDataset } from '@panta/core';
import { describe, expect, it } from 'vitest';
import { ROOT, tempDir } from './helpers.js';

const read = (f: string) => readFileSync(join(ROOT, f), 'utf8');
const load = (f: string) => parseDataset(read(`datasets/${f}`), f);
const node = (...args: string[]) => spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8' });

describe('team task sets', () => {
  it('multifact26: 26 questions, each with 2 or more gold facts and a license note', () => {
    const set = load('multifact26.jsonl');
    expect(set).toHaveLength(26);
    for (const p of set) {
      expect(p.facts!.length, p.id).toBeGreaterThanOrEqual(2);
      expect(p.accepted).toEqual(p.facts);
      expect(p.source).toMatch(/FanOutQA-style, written by hand\), same license as Panta/);
    }
  });

  it('claims24: 12 supported and 12 refuted claims, the other label the known false answer', () => {
    const set = load('claims24.jsonl');
    expect(set).toHaveLength(24);
    expect(set.filter((p) => p.accepted[0] === 'supported')).toHaveLength(12);
    for (const p of set) {
      expect(p.choices).toEqual(['supported', 'refuted']);
      expect([...p.accepted, ...p.false_answers].sort()).toEqual(['refuted', 'supported']);
    }
  });

  it('mmlu-pro28: two questions per category, the gold option the letter upstream names, MIT / Apache-2.0 noted', () => {
    const set = load('mmlu-pro28.jsonl');
    expect(set).toHaveLength(28);
    const categories = new Map<string, number>();
    for (const p of set) {
      const gold = /gold=([A-J])$/.exec(p.source)![1];
      expect(p.choices![gold.charCodeAt(0) - 65], p.id).toBe(p.accepted[0]);
      expect(p.false_answers).toHaveLength(p.choices!.length - 1);
      expect(p.question).toContain(`(${gold}) ${p.accepted[0]}`);
      expect(p.source).toMatch(/MIT \(dataset card\) \/ Apache-2\.0 \(repository\)/);
      const c = /category=([^;]+);/.exec(p.source)![1];
      categories.set(c, (categories.get(c) ?? 0) + 1);
    }
    expect(categories.size).toBe(14);
    expect([...categories.values()].every((n) => n === 2)).toBe(true);
  });

  it('the hand-written sets are what their scripts write, byte for byte', () => {
    const dir = tempDir();
    for (const [script, file] of [
      ['build-multifact.mjs', 'multifact26.jsonl'],
      ['build-claims.mjs', 'claims24.jsonl'],
    ]) {
      const r = node(join('scripts', script), join(dir, file));
      expect(r.status, r.stderr).toBe(0);
      expect(readFileSync(join(dir, file), 'utf8')).toBe(read(`datasets/${file}`));
    }
  });

  it('build-mmlu-pro without its source folder says so in one line and exits 2', () => {
    const r = node(join('scripts', 'build-mmlu-pro.mjs'));
    expect(r.status).toBe(2);
    expect(r.stderr).toBe('build-mmlu-pro: pass the folder of <category>_result.json files as the first argument\n');
  });

  it('check-datasets passes every committed set and flags an accepted answer outside the choices', () => {
    expect(node(join('scripts', 'check-datasets.mjs')).status).toBe(0);
    const bad = join(tempDir(), 'bad.jsonl');
    writeFileSync(
      bad,
      '{"id":"x","question":"q","accepted":["maybe"],"false_answers":[],"false_premise":false,"source":"s","choices":["yes","no"]}\n',
    );
    const r = node(join('scripts', 'check-datasets.mjs'), bad);
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/bad\.jsonl:1: x: every accepted answer must be one of the choices/);
  });
});
