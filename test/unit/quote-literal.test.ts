import { PostgreSqlPlatform } from '@mikro-orm/postgresql';
import { describe, expect, it } from 'vitest';
import { NotesPostgreSqlPlatform, quoteLiteral } from '../../src/db/postgresql-driver.ts';

// MikroORM's own quoting (a character at a time), which quoteLiteral must equal exactly
const original = (text: string): string => (new PostgreSqlPlatform() as unknown as { escapeLiteral(text: string): string }).escapeLiteral(text);

/** Deterministic pseudo-random strings over the characters that matter to quoting, and some that do not. */
function randomStrings(count: number): string[] {
  const alphabet = ["'", '\\', 'a', ' ', '\n', '\r', '?', '$', 'E', '"', '\0', 'é', '日', '\u{1F600}', '\uD800', '\uDC00'];
  let state = 7;
  const next = () => (state = (Math.imul(state, 1664525) + 1013904223) >>> 0);
  return Array.from({ length: count }, () => Array.from({ length: next() % 24 }, () => alphabet[next() % alphabet.length]).join(''));
}

describe('quoteLiteral', () => {
  it.each([
    ['', "''"],
    ['plain', "'plain'"],
    ["it's", "'it''s'"],
    ['back\\slash', " E'back\\\\slash'"],
    ["both ' and \\", " E'both '' and \\\\'"],
    ["''\\\\", " E'''''\\\\\\\\'"],
  ])('%j is written %s', (text, literal) => {
    expect(quoteLiteral(text)).toBe(literal);
    expect(original(text)).toBe(literal);
  });

  it('writes what MikroORM writes, for any string', () => {
    for (const text of randomStrings(5000)) expect(quoteLiteral(text)).toBe(original(text));
  });

  it('quotes a 1 MiB string in memory proportional to it (no rope of a node per character)', () => {
    const text = "<p>it's a line\\n</p>\n".repeat(50_000);
    const before = process.memoryUsage().heapUsed;
    const literal = quoteLiteral(text);
    const grown = process.memoryUsage().heapUsed - before;
    expect(literal).toBe(original(text));
    // MikroORM's loop leaves a rope node of some 32 bytes per character until the text is flattened
    expect(grown).toBeLessThan(20 * text.length);
  });

  it('is the platform the ORM quotes every value with', () => {
    const platform = new NotesPostgreSqlPlatform();
    expect(platform.formatQuery('select ?, ?, ?', ["it's", 'a\\b', 3])).toBe("select 'it''s',  E'a\\\\b', 3");
    expect(platform.quoteValue(['x', "y'"])).toBe("'x', 'y'''");
  });
});
