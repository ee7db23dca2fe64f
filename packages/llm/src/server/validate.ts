import { RequestError } from './types.js';

/** Small checks for request bodies; each failure is a 400 naming the field. */

export function object(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new RequestError(400, `${what}: expected a JSON object`, what);
  return value as Record<string, unknown>;
}

export function optionalNumber(body: Record<string, unknown>, key: string, min: number, max: number): number | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max) {
    throw new RequestError(400, `${key}: expected a number in ${min}..${max}, got ${JSON.stringify(v)}`, key);
  }
  return v;
}

export function optionalInt(body: Record<string, unknown>, key: string, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min || v > max) {
    throw new RequestError(400, `${key}: expected an integer >= ${min}, got ${JSON.stringify(v)}`, key);
  }
  return v;
}

export function optionalBoolean(body: Record<string, unknown>, key: string): boolean | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw new RequestError(400, `${key}: expected true or false, got ${JSON.stringify(v)}`, key);
  return v;
}

export function requiredString(body: Record<string, unknown>, key: string): string {
  const v = body[key];
  if (typeof v !== 'string' || v.length === 0) throw new RequestError(400, `${key}: required, a non-empty string`, key);
  return v;
}

/** Message content: a string, or text blocks ({type: 'text', text}) joined as they are. */
export function textContent(content: unknown, where: string): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    let text = '';
    for (const block of content) {
      const b = object(block, `${where}[]`);
      if (b.type !== 'text' || typeof b.text !== 'string')
        throw new RequestError(400, `${where}: only text blocks ({type: "text", text}) are supported`, where);
      text += b.text;
    }
    return text;
  }
  throw new RequestError(400, `${where}: expected a string or an array of text blocks`, where);
}

export function checkModel(model: string, served: string): void {
  if (model !== served) throw new RequestError(404, `The model \`${model}\` does not exist (this server serves \`${served}\`).`, 'model');
}
