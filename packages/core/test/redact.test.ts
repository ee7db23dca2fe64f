import { describe, expect, it } from 'vitest';
import { REDACTED, Redactor, boundedText, redact, registerSecret, secretsInEnv } from '../src/index.js';

const KEY = 'sq-TopSecret/Key+42=';

describe('Redactor: literal secrets', () => {
  it('redacts a registered key wherever it appears, as often as it appears', () => {
    const r = new Redactor([KEY]);
    expect(r.redact(`401: invalid key ${KEY}; you sent ${KEY}.`)).toBe(`401: invalid key ${REDACTED}; you sent ${REDACTED}.`);
    expect(r.redact(`prefix${KEY}suffix`)).toBe(`prefix${REDACTED}suffix`);
  });

  it('redacts the key JSON-escaped (once and twice, and with an escaped slash) and URL-encoded in either case', () => {
    const r = new Redactor(['ab"cd\\ef/gh ij']);
    const once = JSON.stringify({ error: 'ab"cd\\ef/gh ij' });
    expect(once).toContain('ab\\"cd\\\\ef/gh ij');
    expect(r.redact(once)).toBe(`{"error":"${REDACTED}"}`);
    const twice = JSON.stringify({ line: once });
    expect(r.redact(twice)).toBe(JSON.stringify({ line: `{"error":"${REDACTED}"}` }));
    expect(r.redact('ab\\"cd\\\\ef\\/gh ij')).toBe(REDACTED);
    const encoded = encodeURIComponent('ab"cd\\ef/gh ij');
    expect(encoded).toBe('ab%22cd%5Cef%2Fgh%20ij');
    expect(r.redact(`?k=${encoded}&x=1`)).toBe(`?k=${REDACTED}&x=1`);
    expect(r.redact('?k=ab%22cd%5cef%2fgh+ij')).toBe(`?k=${REDACTED}`);
  });

  it('redacting a JSON line leaves valid JSON with the key gone, even when the key holds quotes and backslashes', () => {
    const key = 'k\\"ey-with-quote\\';
    const r = new Redactor([key]);
    const line = JSON.stringify({ msg: 'run failed', err: `HTTP 401: {"error":"bad key ${key}"}`, nested: JSON.stringify({ key }) });
    const out = r.redact(line);
    expect(() => JSON.parse(out)).not.toThrow();
    expect(out).not.toContain('ey-with-quote');
  });

  it('short secrets: under 4 characters ignored, under 8 only as whole tokens', () => {
    const r = new Redactor(['42', 'test1']);
    expect(r.size).toBe(1);
    expect(r.redact('HTTP 401 after 42 attempts')).toBe('HTTP 401 after 42 attempts');
    expect(r.redact('latest123 and test1, key=test1')).toBe(`latest123 and ${REDACTED}, key=${REDACTED}`);
    expect(r.redact('contest10')).toBe('contest10');
  });

  it('ignores empty and undefined secrets and trims what it keeps', () => {
    const r = new Redactor([undefined, '', '   ', ` ${KEY}\n`]);
    expect(r.size).toBe(1);
    expect(r.redact(KEY)).toBe(REDACTED);
  });

  it('redactValue redacts every string of a JSON-like value and keeps its shape', () => {
    const r = new Redactor([KEY]);
    const value = { run_id: 'r1', error: `bad ${KEY}`, calls: 3, list: [KEY, 1, null], when: null };
    expect(r.redactValue(value)).toEqual({ run_id: 'r1', error: `bad ${REDACTED}`, calls: 3, list: [REDACTED, 1, null], when: null });
    expect(value.error).toBe(`bad ${KEY}`);
  });
});

describe('Redactor: credentials recognised by shape', () => {
  const r = new Redactor();
  it('URL user-info', () => {
    expect(r.redact('GET https://user:pa55word@api.example.com/v1/chat failed')).toBe(
      `GET https://${REDACTED}@api.example.com/v1/chat failed`,
    );
    expect(r.redact('redis://:hunter2hunter2@10.0.0.1:6379/0')).toBe(`redis://${REDACTED}@10.0.0.1:6379/0`);
    expect(r.redact('http://127.0.0.1:8000/v1 and someone@example.com')).toBe('http://127.0.0.1:8000/v1 and someone@example.com');
  });

  it('secret query parameters, and only those', () => {
    expect(r.redact('https://h/v1/models?api_key=abc123xyz&model=m')).toBe(`https://h/v1/models?api_key=${REDACTED}&model=m`);
    expect(r.redact('https://h/x?model=m&token=t0k3n&key=K')).toBe(`https://h/x?model=m&token=${REDACTED}&key=${REDACTED}`);
    expect(r.redact('https://h/x?model=m&page=2')).toBe('https://h/x?model=m&page=2');
  });

  it('credential headers as text and as JSON, the scheme kept', () => {
    expect(r.redact('Authorization: Bearer abc.def-ghi')).toBe(`Authorization: Bearer ${REDACTED}`);
    expect(r.redact('x-api-key: k-123')).toBe(`x-api-key: ${REDACTED}`);
    expect(r.redact('failed (authorization: Bearer abc.def-ghi) after 2 attempts')).toBe(
      `failed (authorization: Bearer ${REDACTED}) after 2 attempts`,
    );
    expect(r.redact('{"api-key":"k-123","model":"m"}')).toBe(`{"api-key":"${REDACTED}","model":"m"}`);
    expect(r.redact('{\\"authorization\\":\\"Basic dXNlcjpwYXNz\\"}')).toBe(`{\\"authorization\\":\\"Basic ${REDACTED}\\"}`);
    expect(r.redact('request had bearer eyJhbGciOiJIUzI1NiJ9.x.y')).toBe(`request had bearer ${REDACTED}`);
  });

  it('keys shaped like vendor keys', () => {
    expect(r.redact('Incorrect API key provided: sk-proj-AbCdEfGhIjKlMnOpQrSt')).toBe(`Incorrect API key provided: ${REDACTED}`);
    expect(r.redact('task-list sk-short')).toBe('task-list sk-short');
  });

  it('leaves ordinary messages alone', () => {
    const text = 'openai http://127.0.0.1:8000/v1: HTTP 503: overloaded (not retried); check the backend api_key_env';
    expect(r.redact(text)).toBe(text);
  });
});

describe('the process redactor', () => {
  it("takes the vendors' keys and Panta's secret-named variables from the environment, not other variables", () => {
    const env = {
      OPENAI_API_KEY: 'o-key-1234',
      ANTHROPIC_API_KEY: 'a-key-1234',
      PANTA_API_KEY: 'p-key-1234',
      PANTA_REDIS_URL: 'redis://h:6379',
      HOME: '/home/x',
    };
    expect(secretsInEnv(env).sort()).toEqual(['a-key-1234', 'o-key-1234', 'p-key-1234']);
  });

  it('redacts a registered key from then on, and boundedText redacts before it cuts', () => {
    const key = 'reg-istered-key-7c1f';
    expect(redact(`x ${key}`)).toBe(`x ${key}`);
    registerSecret(key);
    expect(redact(`x ${key}`)).toBe(`x ${REDACTED}`);
    const body = `${'a'.repeat(295)} ${key} ${'b'.repeat(1000)}`;
    const cut = boundedText(body, 300);
    expect(cut).not.toContain('reg-istered');
    expect(cut.length).toBeLessThanOrEqual(303);
    expect(boundedText('line one\n\n  line two')).toBe('line one line two');
  });
});
