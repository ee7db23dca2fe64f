import type { TopLevelSpec } from 'vega-lite';
import { armColumns, armNote, armOf, armsPresent, exclusionNote, pooledRuns } from './arms.js';
import type { CorpusData, RunInfo } from './corpus-data.js';
import { CONFIG, SCHEMA } from './figure-style.js';
import type { Figure } from './figure.js';
import { majority, runSeries, type Majority } from './run-series.js';
import type { Cell, Table } from './table.js';

const MAJORITIES: Majority[] = ['correct', 'hallucinated', 'tie', 'none'];

const DEFINITION =
  "A snapshot's majority compares its answers tagged correct with those tagged hallucinated: correct when more are correct, hallucinated when more are hallucinated, " +
  'tie when as many (at least one each), none when there is neither (every answer not known or a judge failure). ' +
  'Initial: snapshot t = 0 (the answers before any interaction); final: the last sweep.';

interface Fate {
  run: RunInfo;
  initial: Majority;
  final: Majority;
}

function fates(data: CorpusData, runs: readonly RunInfo[]): Fate[] {
  const series = runSeries(data);
  const out: Fate[] = [];
  for (const run of runs) {
    const s = series.get(run.run_id);
    if (s && s.length > 0) out.push({ run, initial: majority(s[0]), final: majority(s.at(-1)!) });
  }
  return out;
}

function counts(fs: readonly Fate[]): Cell[] {
  const n = (i: Majority, f: Majority) => fs.filter((x) => x.initial === i && x.final === f).length;
  const repaired = n('hallucinated', 'correct');
  const corrupted = n('correct', 'hallucinated');
  const other = fs.filter((x) => x.initial === 'tie' || x.initial === 'none' || x.final === 'tie' || x.final === 'none').length;
  return [fs.length, repaired, corrupted, n('hallucinated', 'hallucinated'), n('correct', 'correct'), other];
}

/** The paper's headline question as a table: does the t = 0 majority decide the final factual state? Per arm, per prompt and pooled. */
export function fateTable(data: CorpusData): Table {
  const arms = armColumns(data);
  const all = fates(data, data.runs);
  const pooled = new Set(pooledRuns(data).map((r) => r.run_id));
  const prompts = [...new Set(all.map((f) => f.run.prompt_id))].sort();
  const rows: Cell[][] = [];
  for (const arm of armsPresent(
    all.map((f) => f.run),
    arms,
  )) {
    const inArm = all.filter((f) => armOf(f.run, arms) === arm);
    const head = arms.length > 0 ? [arm] : [];
    for (const p of prompts) {
      const some = inArm.filter((f) => f.run.prompt_id === p);
      if (some.length > 0) rows.push([...head, p, ...counts(some)]);
    }
    rows.push([...head, 'pooled', ...counts(inArm.filter((f) => pooled.has(f.run.run_id)))]);
  }
  return {
    id: 'majority-fate',
    title: 'Initial majority against final factual fate',
    caption:
      `${DEFINITION} Per prompt and pooled, runs whose initial majority was hallucinated and whose final majority is correct (repaired), ` +
      'the reverse (corrupted), those that kept a hallucinated or a correct majority, and those with a tie or no majority at either end (other).' +
      exclusionNote(data).replace('this pooled analysis', 'the pooled row') +
      armNote(data),
    columns: [
      ...(arms.length > 0 ? ['arm'] : []),
      'prompt',
      'runs',
      'wrong → correct',
      'correct → wrong',
      'wrong → wrong',
      'correct → correct',
      'other (tie or none)',
    ],
    rows,
    empty: 'No run is complete yet.',
  };
}

/** The same as a grid: initial majority (rows) against final majority (columns), runs counted in each cell, pooled over prompts. */
export function fateFigure(data: CorpusData): Figure | null {
  const arms = armColumns(data);
  const fs = fates(data, pooledRuns(data));
  if (fs.length === 0) return null;
  const values: object[] = [];
  const order = armsPresent(
    fs.map((f) => f.run),
    arms,
  );
  for (const arm of order) {
    for (const i of MAJORITIES) {
      for (const f of MAJORITIES) {
        const runs = fs.filter((x) => armOf(x.run, arms) === arm && x.initial === i && x.final === f).length;
        values.push({
          arm,
          initial: i,
          final: f,
          runs,
          changed: (i === 'hallucinated' && f === 'correct') || (i === 'correct' && f === 'hallucinated'),
        });
      }
    }
  }
  const layer = [
    {
      mark: { type: 'rect', stroke: 'white' },
      encoding: {
        x: { field: 'final', type: 'nominal', sort: MAJORITIES, title: 'final majority', axis: { labelAngle: 0 } },
        y: { field: 'initial', type: 'nominal', sort: MAJORITIES, title: 'initial majority (t = 0)' },
        // no legend: the counts are written in the cells, and a gradient legend would need url(#...) in the inline SVG
        color: { field: 'runs', type: 'quantitative', title: 'runs', scale: { scheme: 'blues' }, legend: null },
      },
    },
    {
      mark: { type: 'text', fontSize: 12 },
      encoding: {
        x: { field: 'final', type: 'nominal', sort: MAJORITIES },
        y: { field: 'initial', type: 'nominal', sort: MAJORITIES },
        text: { field: 'runs', type: 'quantitative' },
        fontWeight: { condition: { test: 'datum.changed', value: 'bold' }, value: 'normal' },
        // white on the darker half of the colour scale, so the count stays readable
        color: {
          condition: { test: `datum.runs > ${Math.max(...values.map((v) => (v as { runs: number }).runs)) / 2}`, value: 'white' },
          value: 'black',
        },
      },
    },
  ];
  const spec = (arms.length > 0
    ? {
        $schema: SCHEMA,
        title: 'initial majority against final majority',
        config: CONFIG,
        data: { values },
        facet: { column: { field: 'arm', type: 'nominal', sort: order, title: null } },
        spec: { width: 200, height: 160, layer },
      }
    : {
        $schema: SCHEMA,
        title: 'initial majority against final majority',
        config: CONFIG,
        data: { values },
        width: 240,
        height: 180,
        layer,
      }) as unknown as TopLevelSpec;
  const repaired = fs.filter((f) => f.initial === 'hallucinated' && f.final === 'correct').length;
  const corrupted = fs.filter((f) => f.initial === 'correct' && f.final === 'hallucinated').length;
  return {
    id: 'majority-fate-grid',
    title: 'Initial majority against final factual fate',
    caption:
      `${DEFINITION} Runs counted per cell (bold: the majority changed side): ${repaired} of ${fs.length} runs went from a hallucinated to a correct majority, ` +
      `${corrupted} from a correct to a hallucinated one.` +
      exclusionNote(data) +
      armNote(data),
    spec,
  };
}
