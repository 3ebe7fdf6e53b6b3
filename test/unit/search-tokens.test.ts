// indexTokens hashes incrementally, without making the strings it hashes; these tests hold it to the plain
// definition (src/modules/search/text.ts, header): the same tokens, in the same order, for any text.
import { describe, expect, it } from 'vitest';
import { indexTokens, normalize, tokenHash } from '../../src/modules/search/text.ts';

const scriptOf = (char: string) =>
  /[\p{Script=Han}々〆ヶ]/u.test(char) && !/[\u3000-\u303f]/u.test(char) || char === '々' || char === '〆' ? 'han'
    : /[\p{Script=Katakana}ー]/u.test(char) && char !== '・' ? 'katakana'
      : /\p{Script=Hiragana}/u.test(char) ? 'hiragana'
        : /[\p{L}\p{N}\p{M}_]/u.test(char) ? 'word' : 'other';

/** The definition, written the plain way: runs of characters, then every string hashed. */
function reference(text: string): number[] {
  const tokens = new Set<number>();
  const runs: { kind: string; chars: string[] }[] = [];
  for (const char of text) {
    const script = scriptOf(char);
    const kind = script === 'word' ? 'word' : script === 'other' ? undefined : 'cjk';
    if (!kind) { runs.push({ kind: 'gap', chars: [] }); continue; }
    const last = runs[runs.length - 1];
    if (last && last.kind === kind) last.chars.push(char);
    else runs.push({ kind, chars: [char] });
  }
  for (const { kind, chars } of runs) {
    if (kind === 'word') {
      if (chars.length === 1) tokens.add(tokenHash(chars[0]!));
      for (let length = 2; length <= Math.min(chars.length, 16); length += 1) tokens.add(tokenHash(chars.slice(0, length).join('')));
      if (chars.length <= 32) tokens.add(tokenHash(`\u0001${chars.join('')}`));
    } else if (kind === 'cjk') {
      chars.forEach((char, i) => {
        tokens.add(tokenHash(char));
        if (i + 1 < chars.length) tokens.add(tokenHash(char + chars[i + 1]!));
      });
      let start = 0;
      for (let i = 1; i <= chars.length; i += 1) {
        if (i === chars.length || scriptOf(chars[i]!) !== scriptOf(chars[start]!)) {
          if (i - start <= 32) tokens.add(tokenHash(`\u0001${chars.slice(start, i).join('')}`));
          start = i;
        }
      }
    }
  }
  return [...tokens];
}

describe('indexTokens', () => {
  it.each([
    '', 'a', 'ab', 'hello world', '会議室の予約', '画面キャプチャを撮る 2024年 test_case', 'x'.repeat(40), `${'キ'.repeat(40)}会議`,
    '𠮷野家 𠮷 a𠮷b', 'ǆemal straße ｔａｇ i̇stanbul', 'mixedキャプチャword漢字かな', '々〆ヶ ー 、。「」', 'é\u0301e café',
  ])('%j: the tokens of the definition', (text) => {
    expect(indexTokens(normalize(text))).toEqual(reference(normalize(text)));
  });

  it('agrees with the definition on random texts of mixed scripts', () => {
    const alphabet = ['a', 'b', 'Z', '1', ' ', '会', '議', 'キ', 'ャ', 'か', 'ー', '𠮷', 'é', '-', '_', '。', 'ß', '\u0301', '・', 'ヶ'];
    let seed = 42;
    const random = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
    for (let k = 0; k < 3000; k += 1) {
      let text = '';
      for (let i = Math.floor(random() * 60); i > 0; i -= 1) text += alphabet[Math.floor(random() * alphabet.length)];
      const normalized = normalize(text);
      expect(indexTokens(normalized), JSON.stringify(normalized)).toEqual(reference(normalized));
    }
  });
});
