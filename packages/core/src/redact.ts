/** What a redacted secret, credential or header value is replaced with. */
export const REDACTED = '[redacted]';

/**
 * Secrets shorter than this are not redacted at all: a 1-3 character "key" matches digits and words of every
 * message, and no real API key is that short. Secrets shorter than WHOLE_TOKEN_BELOW are redacted only as whole
 * tokens (not inside a longer word), so that a short key such as `test1` does not cut up `latest123`.
 */
const MIN_SECRET = 4;
const WHOLE_TOKEN_BELOW = 8;

/**
 * Credentials recognised by shape, whatever the secrets registered: the user-info of a URL
 * (`https://user:pass@host`, `redis://:pass@host`), secret query parameters (`?api_key=...`), credential
 * headers written as `name: value` or `"name":"value"` (Authorization, x-api-key, api-key, cookies), bearer
 * tokens, and keys shaped like OpenAI's and Anthropic's (`sk-...`). Value classes stop at quotes and
 * backslashes, so that redacting a JSON line leaves it valid JSON.
 */
const PATTERNS: readonly [RegExp, string][] = [
  [/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@"'\\<>]+@/gi, `$1${REDACTED}@`],
  [
    /([?&;](?:api[_-]?key|apikey|key|access[_-]?token|refresh[_-]?token|token|auth|password|passwd|pwd|secret|client[_-]?secret|sig|signature)=)[^&#\s"'\\<>]+/gi,
    `$1${REDACTED}`,
  ],
  [
    /\b((?:proxy-)?authorization|x-api-key|api-key|x-goog-api-key|(?:set-)?cookie)((?:\\?["'])?\s*[:=]\s*(?:\\?["'])?)((?:bearer|basic|token)\s+)?[^\s"'\\,;})]+/gi,
    `$1$2$3${REDACTED}`,
  ],
  [/\b(bearer)\s+[A-Za-z0-9._~+/=-]{8,}/gi, `$1 ${REDACTED}`],
  [/\bsk-[A-Za-z0-9_-]{16,}/g, REDACTED],
];

/** The forms a secret can take in text Panta stores: as is, JSON-escaped (once or twice), URL-encoded. */
function variants(secret: string): string[] {
  const json = (s: string) => JSON.stringify(s).slice(1, -1);
  const out = new Set<string>([secret, json(secret), json(json(secret)), json(secret).replace(/\//g, '\\/')]);
  const encoded = encodeURIComponent(secret);
  out.add(encoded);
  out.add(encoded.replace(/%20/g, '+'));
  return [...out];
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A percent escape matches in either case (`%2F` and `%2f`): servers differ. */
function variantSource(variant: string): string {
  return escapeRegExp(variant).replace(
    /%([0-9A-F])([0-9A-F])/g,
    (_, a: string, b: string) => `%[${a}${a.toLowerCase()}][${b}${b.toLowerCase()}]`,
  );
}

/**
 * Replaces secrets with `[redacted]`: the literal values registered (API keys read from the environment) in
 * every form they take in text, and credentials recognised by shape (PATTERNS). Pure: the same secrets and
 * text give the same result.
 */
export class Redactor {
  private readonly secrets = new Set<string>();
  private compiled: RegExp | null = null;

  constructor(secrets: Iterable<string | undefined> = []) {
    for (const s of secrets) this.add(s);
  }

  /** Adds a secret value (trimmed); one shorter than 4 characters is ignored (see MIN_SECRET). */
  add(secret: string | undefined): void {
    const s = secret?.trim();
    if (!s || s.length < MIN_SECRET || this.secrets.has(s)) return;
    this.secrets.add(s);
    this.compiled = null;
  }

  get size(): number {
    return this.secrets.size;
  }

  redact(text: string): string {
    let out = text;
    const secrets = this.pattern();
    if (secrets) out = out.replace(secrets, REDACTED);
    for (const [pattern, replacement] of PATTERNS) out = out.replace(pattern, replacement);
    return out;
  }

  /** A copy of a JSON-like value with every string redacted (keys kept). */
  redactValue<T>(value: T): T {
    if (typeof value === 'string') return this.redact(value) as T;
    if (Array.isArray(value)) return value.map((v: unknown) => this.redactValue(v)) as T;
    if (value !== null && typeof value === 'object' && !(value instanceof Date)) {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) out[k] = this.redactValue(v);
      return out as T;
    }
    return value;
  }

  /** One alternation of every variant of every secret, longest first (an escaped form wins over its prefix). */
  private pattern(): RegExp | null {
    if (this.secrets.size === 0) return null;
    if (this.compiled) return this.compiled;
    const parts: { length: number; source: string }[] = [];
    for (const secret of this.secrets) {
      for (const v of variants(secret)) {
        const source = variantSource(v);
        parts.push({ length: v.length, source: secret.length < WHOLE_TOKEN_BELOW ? `(?<![A-Za-z0-9])${source}(?![A-Za-z0-9])` : source });
      }
    }
    parts.sort((a, b) => b.length - a.length);
    this.compiled = new RegExp(parts.map((p) => p.source).join('|'), 'g');
    return this.compiled;
  }
}

/** Environment variables whose values are secrets wherever they are set: the vendors' keys and Panta's own. */
const SECRET_ENV =
  /^(OPENAI_API_KEY|ANTHROPIC_API_KEY|ANTHROPIC_AUTH_TOKEN|PANTA_\w*(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?|AUTH)\w*)$/;

/** The values of the secret environment variables that are set. */
export function secretsInEnv(env: NodeJS.ProcessEnv): string[] {
  return Object.entries(env)
    .filter(([name, value]) => SECRET_ENV.test(name) && value !== undefined)
    .map(([, value]) => value!);
}

let processRedactor: Redactor | null = null;

/**
 * The process's redactor: the secret environment variables' values, and every key registered since (a
 * backend registers the key it reads from its spec's `api_key_env`). Every sink that logs or stores text
 * (logs, journals, the corpus, Redis, the console) passes it through `redact`.
 */
function shared(): Redactor {
  processRedactor ??= new Redactor(secretsInEnv(process.env));
  return processRedactor;
}

export function registerSecret(secret: string | undefined): void {
  shared().add(secret);
}

export function redact(text: string): string {
  return shared().redact(text);
}

export function redactValue<T>(value: T): T {
  return shared().redactValue(value);
}

/** Text from outside (an HTTP body, an SDK message) flattened to one line, cut to `max` characters, redacted. */
export function boundedText(text: string, max = 300): string {
  const flat = redact(text.replace(/\s+/g, ' ').trim());
  return flat.length > max ? `${flat.slice(0, max)}...` : flat;
}
