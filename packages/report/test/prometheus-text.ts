import parsePrometheusTextFormat from 'parse-prometheus-text-format';

/** One metric family as the independent parser (parse-prometheus-text-format, prom2json's shape) reads it. */
export interface Family {
  name: string;
  help: string;
  type: string;
  metrics: { value?: string; labels?: Record<string, string>; buckets?: Record<string, string> }[];
}

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const LABEL = '[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\\\\n]|\\\\[\\\\"n])*"';
const VALUE = '(?:[+-]?(?:\\d+(?:\\.\\d*)?|\\.\\d+)(?:[eE][+-]?\\d+)?|[+-]?Inf|NaN)';
const SAMPLE = new RegExp(`^(${NAME})(?:\\{(?:${LABEL})(?:,${LABEL})*,?\\})? ${VALUE}(?: -?\\d+)?$`);
const HELP = new RegExp(`^# HELP (${NAME}) .*$`);
const TYPE = new RegExp(`^# TYPE (${NAME}) (counter|gauge|histogram|summary|untyped)$`);

/**
 * Strict checks of the text exposition format 0.0.4, line by line (written from the format's description,
 * not from prom-client): every line is a HELP, a TYPE, a sample or empty; a family's TYPE comes once and
 * before its samples; histogram and summary samples carry their suffixes; the text ends with a newline.
 * Returns the problems found (empty: valid).
 */
export function expositionProblems(text: string): string[] {
  const problems: string[] = [];
  if (!text.endsWith('\n')) problems.push('does not end with a newline');
  const types = new Map<string, string>();
  const sampled = new Set<string>();
  text.split('\n').forEach((line, i) => {
    const at = `line ${i + 1}: ${JSON.stringify(line)}`;
    if (line === '') return;
    const type = TYPE.exec(line);
    if (type) {
      if (types.has(type[1])) problems.push(`${at}: second TYPE for ${type[1]}`);
      if (sampled.has(type[1])) problems.push(`${at}: TYPE after samples of ${type[1]}`);
      types.set(type[1], type[2]);
      return;
    }
    if (HELP.test(line)) return;
    if (line.startsWith('#')) return problems.push(`${at}: a comment that is neither HELP nor TYPE`) && undefined;
    const sample = SAMPLE.exec(line);
    if (!sample) return problems.push(`${at}: not a sample line`) && undefined;
    const name = sample[1];
    const family = [name, name.replace(/_(bucket|sum|count)$/, ''), name.replace(/_(sum|count)$/, '')].find((n) => types.has(n));
    if (!family) return problems.push(`${at}: sample of ${name} without a TYPE`) && undefined;
    const kind = types.get(family)!;
    if (family !== name && !['histogram', 'summary'].includes(kind)) problems.push(`${at}: suffixed sample of ${kind} ${family}`);
    if (kind === 'histogram' && name === family) problems.push(`${at}: histogram sample without _bucket/_sum/_count`);
    if (name.endsWith('_bucket') && !/le="/.test(line)) problems.push(`${at}: bucket without le`);
    sampled.add(family);
  });
  return problems;
}

export function parseExposition(text: string): Family[] {
  return (parsePrometheusTextFormat as unknown as (t: string) => Family[])(text);
}

/** The value of one metric's sample whose labels include `labels`; undefined when there is none. */
export function sampleValue(families: Family[], name: string, labels: Record<string, string> = {}): number | undefined {
  const family = families.find((f) => f.name === name);
  const sample = family?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
  return sample?.value === undefined ? undefined : Number(sample.value);
}
