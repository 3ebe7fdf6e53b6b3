// foldCase, the one case-insensitive key of tags, names and search (src/modules/text/fold.ts), as a table; then the
// whole of Unicode: idempotent, in step with the engine's own case folding, and with the foldings that migration 0013
// writes out in SQL to give the tags stored before it their keys.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { foldCase } from '../../src/modules/text/fold.ts';

const codePoints = function* () {
  for (let code = 0; code <= 0x10ffff; code += 1) if (code < 0xd800 || code > 0xdfff) yield code;
};

describe('foldCase', () => {
  it.each([
    // text, key
    ['Docs', 'docs'],
    ['İ', 'i\u0307'], // İ is i with a dot above, not i
    ['İı', 'i\u0307ı'],
    ['ı', 'ı'], // dotless ı has no other case in the default folding
    ['I', 'i'],
    ['ß', 'ss'],
    ['ẞ', 'ss'],
    ['Straße', 'strasse'],
    ['ǅ', 'dž'], // NFKC: the digraph is d and ž
    ['Ǆ', 'dž'],
    ['ǆ', 'dž'],
    ['Ａ', 'a'],
    ['ａ', 'a'],
    ['Ｔａｇ', 'tag'],
    ['ｶﾞ', 'ガ'],
    ['㍿', '株式会社'],
    ['ﬁ', 'fi'],
    ['\u212a', 'k'], // KELVIN SIGN
    ['\u212b', 'å'], // ANGSTROM SIGN
    ['ΟΔΟΣ', 'οδοσ'], // no final sigma: ς and σ are one letter
    ['οδος', 'οδοσ'],
    ['ᾈ', 'ἀι'],
    ['ꭰ', 'Ꭰ'], // Cherokee folds to its capitals
    ['Ꭰ', 'Ꭰ'],
    ['ŉ', 'ʼn'],
    ['会議', '会議'],
    ['', ''],
  ])('%s -> %s', (text, key) => {
    expect(foldCase(text)).toBe(key);
  });

  it.each([
    // the same key
    [['İı', 'i\u0307ı', 'İı'.toLowerCase(), 'İı'.normalize('NFD')]],
    [['straße', 'STRASSE', 'Strasse', 'STRAẞE', 'ｓｔｒａßｅ']],
    [['ǅemal', 'ǆemal', 'Ǆemal', 'ǄEMAL']],
    [['Ｔａｇ', 'ｔａｇ', 'TAG', 'tag', 'ＴＡＧ']],
  ])('one key for %j', (texts) => {
    expect(new Set(texts.map(foldCase)).size).toBe(1);
  });

  it.each([
    // different keys
    ['İ', 'i'],
    ['İ', 'I'],
    ['ı', 'i'],
    ['İı', 'İI'],
    ['ß', 's'],
  ])('%s is not %s', (a, b) => {
    expect(foldCase(a)).not.toBe(foldCase(b));
  });

  it('is A-Z to a-z on the characters of team names and usernames (the key migration 0013 generates in SQL)', () => {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-';
    expect(foldCase(alphabet)).toBe(alphabet.replace(/[A-Z]/g, (letter) => String.fromCharCode(letter.charCodeAt(0) + 32)));
  });

  it('is its own key for every code point (a key folds to itself)', () => {
    const moved: string[] = [];
    for (const code of codePoints()) {
      const key = foldCase(String.fromCodePoint(code));
      if (foldCase(key) !== key) moved.push(code.toString(16));
    }
    expect(moved).toEqual([]);
  });

  it("gives one key wherever the engine's own case folding (a regular expression with flags iu) says two letters are one", () => {
    const apart: string[] = [];
    for (const code of codePoints()) {
      const letter = String.fromCodePoint(code);
      for (const other of [letter.toLowerCase(), letter.toUpperCase()]) {
        if (other === letter || [...other].length !== 1) continue;
        const pattern = new RegExp(`^${letter.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&')}$`, 'iu');
        if (pattern.test(other) && foldCase(letter) !== foldCase(other)) apart.push(`${letter} ${other}`);
      }
    }
    expect(apart).toEqual([]);
  });
});

/** The foldings migration 0013 writes out in SQL (between `-- fold: begin` and `-- fold: end`), by code point. */
function migrationFoldings(): Map<number, string> {
  const file = readFileSync(new URL('../../src/db/migrations/0013-case-folding-keys.sql', import.meta.url), 'utf8');
  const section = file.slice(file.indexOf('-- fold: begin'), file.indexOf('-- fold: end'));
  const table = new Map<number, string>();
  for (const [, first, last, step, delta] of section.matchAll(/^\s*\((\d+), (\d+), (\d+), (-?\d+)\)/gm)) {
    for (let code = Number(first); code <= Number(last); code += Number(step)) table.set(code, String.fromCodePoint(code + Number(delta)));
  }
  for (const [, code, unicode, text] of section.matchAll(/^\s*\((\d+), (U&)?'([^']*)'\)/gm)) {
    const folded = unicode ? text!.replace(/\\\+([0-9a-f]{6})|\\([0-9a-f]{4})/g, (_all, long: string, short: string) => String.fromCodePoint(parseInt(long ?? short, 16))) : text!;
    table.set(Number(code), folded);
  }
  return table;
}

describe('the foldings of migration 0013', () => {
  it('are foldCase for every code point that NFKC keeps (what the SQL maps, after NFKC)', () => {
    const table = migrationFoldings();
    expect(table.size).toBeGreaterThan(1400);
    const wrong: string[] = [];
    for (const code of codePoints()) {
      const letter = String.fromCodePoint(code);
      if (letter.normalize('NFKC') !== letter) {
        if (table.has(code)) wrong.push(`${code.toString(16)}: not NFKC, never looked up`);
        continue;
      }
      // after a Node upgrade, a difference for letters the table lacks means a newer Unicode made them cased: tags
      // stored before 0013 could not hold letters unassigned then, so the migration stays as it is (narrow this check)
      const expected = foldCase(letter);
      if ((table.get(code) ?? letter) !== expected) wrong.push(`${code.toString(16)}: ${table.get(code) ?? letter} != ${expected}`);
    }
    expect(wrong).toEqual([]);
  });
});
