// The one rule for "the same, whatever the case" (issue 25). Tags, usernames, team names and search all compare
// foldCase(text), computed here: the database stores the keys and compares them as they are, and never uses its
// lower(), which is another rule (it maps İ to i where this one gives i + U+0307, keeps ß where this one gives ss, and
// follows the database's locale). The one key the database computes is that of the ASCII-only team names and
// usernames (migration 0013): A-Z to a-z, which is this rule on ASCII.
//
// The rule is Unicode's compatibility caseless match: NFKC, then full case folding (CaseFolding.txt, statuses C and F;
// not the Turkic T), then NFKC again (Unicode's NFKC_Casefold, except that default-ignorable characters are kept).
//   - upper and lower case are alike, also where lower case alone tells them apart: ß = ẞ = ss = SS, ǅ = ǆ = Ǆ,
//     ς = σ = Σ, K (Kelvin) = k, ﬁ = fi;
//   - full-width and half-width forms are alike (NFKC): Ａ = ａ = A = a, ｶ = カ;
//   - İ (U+0130) is i followed by U+0307 (COMBINING DOT ABOVE), so İ is not i; ı (U+0131) has no other case in the
//     default folding, so ı is neither i nor I.
// Unicode keeps both case folding and NFKC of assigned characters unchanged from one version to the next, so keys
// stored under one Node version stay right under the next.
//
// Built from the JavaScript case mappings: lower, upper, lower again is full case folding for every character (checked
// against Python's str.casefold for all of Unicode 14 and by test/unit/fold.test.ts) but for three: ı, whose upper
// case I would make it i; the final sigma ς, which is lower case's only context-dependent rule (folding gives σ
// everywhere); and Cherokee, which folds to its capitals.

const ASCII = /^[\u0000-\u007f]*$/;
const CHEROKEE_SMALL = /[\u13f8-\u13fd\uab70-\uabbf]/g;

/** The case-insensitive key of a text: equal keys are the same name, tag or search word. */
export function foldCase(text: string): string {
  // ASCII is its own NFKC, and its case folding is a-z
  if (ASCII.test(text)) return text.toLowerCase();
  return text
    .normalize('NFKC')
    .split('ı')
    .map((part) => part.toLowerCase().toUpperCase().toLowerCase())
    .join('ı')
    .replace(/ς/g, 'σ')
    .replace(CHEROKEE_SMALL, (letter) => letter.toUpperCase())
    .normalize('NFKC');
}
