// A search query as the user writes it: words (all must match), "quoted phrases" (matched as written, spaces
// included), and -excluded words or "-phrases". Every term is normalized like the indexed text (text.ts).
import { badRequest } from '../errors.ts';
import { isSearchable, lookupTokens, normalize, wholeWordToken } from './text.ts';

/** At most this many terms (included and excluded) in one query; `q` itself is limited to 256 characters. */
export const MAX_TERMS = 10;

export type ParsedQuery = {
  /** Normalized terms that must all occur. */
  terms: string[];
  /** Normalized terms that must not occur. */
  excluded: string[];
  /** Index tokens every matching document has (of all the terms). */
  tokens: number[];
  /** Per term: its whole-word token, or 0 where it is not one word (ranking only). */
  wordTokens: number[];
};

const QUOTES = /[“”„«»「」『』]/g;

export function parseQuery(q: string): ParsedQuery {
  const text = normalize(q).replace(QUOTES, '"');
  const terms: string[] = [];
  const excluded: string[] = [];
  // -"a phrase" | "a phrase" | -word | word (an unclosed quote runs to the end)
  const pattern = /(-?)"([^"]*)"?|(\S+)/g;
  for (const match of text.matchAll(pattern)) {
    let negative = match[1] === '-';
    let term = match[2] ?? match[3]!;
    if (match[3] !== undefined && term.startsWith('-') && term.length > 1) {
      negative = true;
      term = term.slice(1);
    }
    term = term.replace(/"/g, '').trim();
    if (!isSearchable(term)) continue;
    (negative ? excluded : terms).push(term);
  }
  if (terms.length === 0) {
    throw badRequest('q has no word to search for (letters, digits or CJK characters, not only excluded ones)', [
      { parameter: 'q', detail: 'no searchable word' },
    ]);
  }
  if (terms.length + excluded.length > MAX_TERMS) {
    throw badRequest(`q may have at most ${MAX_TERMS} words and phrases`, [{ parameter: 'q', detail: `more than ${MAX_TERMS} terms` }]);
  }
  const unique = [...new Set(terms)];
  return {
    terms: unique,
    excluded: [...new Set(excluded)],
    tokens: [...new Set(unique.flatMap(lookupTokens))],
    wordTokens: unique.map((term) => wholeWordToken(term) ?? 0),
  };
}
