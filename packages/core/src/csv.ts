/**
 * RFC 4180 CSV: fields separated by commas, records by CRLF or LF; a field in double quotes may hold commas,
 * line breaks and doubled quotes. Pure: the caller reads the file and names it in errors.
 */

/** One field, quoted only when it must be. */
export function csvField(value: string | number | boolean | null | undefined): string {
  const s = value === null || value === undefined ? '' : String(value);
  return /[",\n\r]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

/** A record per line. */
export function csvLine(values: readonly (string | number | boolean | null | undefined)[]): string {
  return values.map(csvField).join(',');
}

/** A parse failure: 1-based record number and what is wrong. */
export class CsvSyntaxError extends Error {
  override name = 'CsvSyntaxError';
  constructor(
    readonly record: number,
    readonly problem: string,
  ) {
    super(`record ${record}: ${problem}`);
  }
}

/**
 * Records of a CSV text (a leading byte-order mark dropped, a final line break optional, blank lines
 * skipped). Throws CsvSyntaxError on a quote that is never closed or text right after a closing quote.
 */
export function parseCsv(text: string): string[][] {
  const src = text.startsWith('\uFEFF') ? text.slice(1) : text;
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let quoted = false;
  let wasQuoted = false;
  let i = 0;
  const endRecord = () => {
    record.push(field);
    if (!(record.length === 1 && record[0] === '' && !wasQuoted)) records.push(record);
    record = [];
    field = '';
    wasQuoted = false;
  };
  while (i < src.length) {
    const ch = src[i];
    if (quoted) {
      if (ch === '"') {
        if (src[i + 1] === '"') {
          field += '"';
          i += 2;
          continue;
        }
        quoted = false;
        i++;
        const next = src[i];
        if (next !== undefined && next !== ',' && next !== '\n' && next !== '\r')
          throw new CsvSyntaxError(records.length + 1, 'text after a closing quote (double a quote inside a quoted field: "")');
        continue;
      }
      field += ch;
      i++;
      continue;
    }
    if (ch === '"' && field === '') {
      quoted = true;
      wasQuoted = true;
      i++;
    } else if (ch === ',') {
      record.push(field);
      field = '';
      wasQuoted = false;
      i++;
    } else if (ch === '\n' || ch === '\r') {
      endRecord();
      i += ch === '\r' && src[i + 1] === '\n' ? 2 : 1;
    } else {
      field += ch;
      i++;
    }
  }
  if (quoted) throw new CsvSyntaxError(records.length + 1, 'a quoted field is never closed');
  if (field !== '' || record.length > 0 || wasQuoted) endRecord();
  return records;
}
