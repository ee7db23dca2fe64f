import { describe, expect, it } from 'vitest';
import { toError } from '../src/index.js';

describe('toError', () => {
  it('passes an Error through as the same object and wraps anything else, keeping its text', () => {
    const e = new TypeError('bad');
    expect(toError(e)).toBe(e);
    expect(toError('plain text')).toEqual(new Error('plain text'));
    expect(toError(42).message).toBe('42');
    expect(toError(undefined).message).toBe('undefined');
    expect(toError(null)).toBeInstanceOf(Error);
  });
});
