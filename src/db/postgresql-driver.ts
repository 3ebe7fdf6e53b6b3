// MikroORM's PostgreSQL driver with one change: how a string is quoted into SQL text. MikroORM 7 sends every
// statement with its values written into the text (no bound parameters), quoting each string with a loop that
// appends one character at a time (`escaped += c`): every character costs a rope node of the JavaScript heap until
// the text is flattened, many times the string's size, so a write of a page at its size limit (the content in the
// page, the same and its diff in the version, the text again in the search document) held most of the heap's
// ceiling at once and the server died on it (docs/speed.md, "Page writes", keeps the figures). Here the same quoting
// is done with whole-string replacements: the same SQL, built in memory proportional to the string.
import { PostgreSqlDriver, PostgreSqlPlatform } from '@mikro-orm/postgresql';
import type { Configuration } from '@mikro-orm/core';

/**
 * A string as a PostgreSQL literal, exactly as MikroORM's `escapeLiteral` writes it (libpq's PQescapeLiteral): quotes
 * doubled; with a backslash, backslashes doubled too and the literal written ` E'...'` (leading space included).
 */
export function quoteLiteral(text: string): string {
  const quoted = text.includes("'") ? text.replaceAll("'", "''") : text;
  if (!text.includes('\\')) return `'${quoted}'`;
  return ` E'${quoted.replaceAll('\\', '\\\\')}'`;
}

export class NotesPostgreSqlPlatform extends PostgreSqlPlatform {
  override escape(value: unknown): string {
    return typeof value === 'string' ? quoteLiteral(value) : super.escape(value);
  }
}

export class NotesPostgreSqlDriver extends PostgreSqlDriver {
  constructor(config: Configuration) {
    super(config);
    // the base class takes its platform from PostgreSqlDriver's constructor, which makes a plain one; nothing has
    // read it yet (the configuration asks for it once the driver is built)
    (this as unknown as { platform: PostgreSqlPlatform }).platform = new NotesPostgreSqlPlatform();
  }
}
