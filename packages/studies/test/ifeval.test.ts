import { describe, expect, it } from 'vitest';
import { followsInstruction, IFEVAL_CHECKS, ifevalStrict } from '../src/teams/metrics/ifeval.js';

describe("IFEval strict accuracy (the Drift paper's instruction-following metric), checks by hand", () => {
  it('scores a response 1 only when every instruction is followed as written', () => {
    const lower = { id: 'change_case:english_lowercase' };
    const noComma = { id: 'punctuation:no_comma' };
    const atLeast5 = { id: 'length_constraints:number_words', args: { relation: 'at least', num_words: 5 } };
    expect(ifevalStrict('one two three four five', [lower, noComma, atLeast5])).toBe(1);
    expect(ifevalStrict('one, two three four five', [lower, noComma, atLeast5])).toBe(0);
    expect(ifevalStrict('One two three four five', [lower])).toBe(0);
    expect(ifevalStrict('one two', [atLeast5])).toBe(0);
  });

  it('format, content and start/end checks', () => {
    expect(followsInstruction('```json\n{"a": 1}\n```', { id: 'detectable_format:json_format' })).toBe(true);
    expect(followsInstruction('{a: 1}', { id: 'detectable_format:json_format' })).toBe(false);
    expect(followsInstruction('<<Drift>>\nbody', { id: 'detectable_format:title' })).toBe(true);
    expect(followsInstruction('a\n***\nb\n***\nc', { id: 'length_constraints:number_paragraphs', args: { num_paragraphs: 3 } })).toBe(true);
    expect(followsInstruction('* x\n* y', { id: 'detectable_format:number_bullet_lists', args: { num_bullets: 2 } })).toBe(true);
    expect(
      followsInstruction('Go to [address] at [time]', { id: 'detectable_content:number_placeholders', args: { num_placeholders: 2 } }),
    ).toBe(true);
    expect(followsInstruction('Body.\nP.S. later', { id: 'detectable_content:postscript', args: { postscript_marker: 'P.S.' } })).toBe(
      true,
    );
    expect(
      followsInstruction('That is all. Is there anything else I can help with?', {
        id: 'startend:end_checker',
        args: { end_phrase: 'Is there anything else I can help with?' },
      }),
    ).toBe(true);
    expect(
      followsInstruction('the cat and the Cat', { id: 'keywords:frequency', args: { keyword: 'cat', relation: 'at least', frequency: 2 } }),
    ).toBe(true);
    expect(followsInstruction('no dogs here', { id: 'keywords:forbidden_words', args: { forbidden_words: ['dogs'] } })).toBe(false);
  });

  it("IFEval's remaining checks as its code states them: nth paragraph's first word, constrained response, sections; words as runs of \\w", () => {
    const nth = { id: 'length_constraints:nth_paragraph_first_word', args: { num_paragraphs: 3, nth_paragraph: 2, first_word: 'drift' } };
    expect(followsInstruction('One.\n\n"Drift, then.\n\nThree.', nth)).toBe(true); // quote and comma stripped, case folded
    expect(followsInstruction('One.\n\nFocus.\n\nThree.', nth)).toBe(false); // another first word
    expect(followsInstruction('One.\n\nDrift.', nth)).toBe(false); // 2 paragraphs, not 3
    expect(followsInstruction('One.\n\n\n\nDrift.\n\nThree.', nth)).toBe(false); // an empty 2nd split: 3 counted, but it is empty
    const constrained = { id: 'detectable_format:constrained_response' };
    expect(followsInstruction('  My answer is maybe.  ', constrained)).toBe(true);
    expect(followsInstruction('My answer is perhaps.', constrained)).toBe(false);
    const sections = { id: 'detectable_format:multiple_sections', args: { section_spliter: 'SECTION', num_sections: 2 } };
    expect(followsInstruction('SECTION 1\nfirst\nSECTION 2\nsecond', sections)).toBe(true);
    expect(followsInstruction('SECTION 1\nonly one', sections)).toBe(false);
    expect(followsInstruction('Section 1 a Section 2 b', sections)).toBe(false); // the splitter is case-sensitive
    // count_words is NLTK's RegexpTokenizer(r"\w+"): "don't" counts 2, so 4 words here, and "less than 4" fails.
    const lessThan4 = { id: 'length_constraints:number_words', args: { relation: 'less than', num_words: 4 } };
    expect(followsInstruction("I don't know", lessThan4)).toBe(false);
    expect(followsInstruction('I do know', lessThan4)).toBe(true);
    // Python's islower: at least one cased letter.
    expect(followsInstruction('123 ...', { id: 'change_case:english_lowercase' })).toBe(false);
  });

  it('an instruction without a check is refused by name (response_language needs a language detector)', () => {
    expect(IFEVAL_CHECKS).not.toContain('language:response_language');
    expect(() => followsInstruction('x', { id: 'language:response_language' })).toThrow(/language:response_language has no check here/);
  });
});
