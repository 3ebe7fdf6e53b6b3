// The hostile values both fuzzers send (test/api/fuzz.test.ts for /api/v1, fuzz-outside-api.test.ts for the routes
// outside it): strings no database can store, values of the wrong type, percent-encodings no decoder should take
// whole, and nesting thousands deep. `DEEP` stands in a JSON body for nesting too deep to build as an object.
import fc from 'fast-check';

export const DEEP = '"\u0001deep\u0001"';

/** NUL inside text, a lone surrogate, or one of the `huge` strings. */
export function hostileStrings(huge: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return fc.oneof(
    fc.string({ maxLength: 20 }).map((text) => `${text}\u0000${text}`),
    fc.tuple(fc.string({ maxLength: 20 }), fc.constantFrom('\ud800', '\udbff', '\udc00', '\udfff')).map(([text, half]) => `${text}${half}`),
    huge,
  );
}

/** An object, an operator object, nested arrays, the deep-nesting stand-in, or numbers and booleans (and `extra`). */
export function wrongTypes(...extra: unknown[]): fc.Arbitrary<unknown> {
  return fc.oneof(
    fc.constant({}),
    fc.constant({ $gt: '' }),
    fc.array(fc.oneof(fc.integer(), fc.string({ maxLength: 5 })), { minLength: 1, maxLength: 3 }).map((items) => [items]),
    fc.constant(DEEP),
    fc.constantFrom(1e308, -1, 2 ** 53, true, ...extra),
  );
}

/** `hostile` percent-encoded (surrogates dropped, at most 20,000 characters), or one of `encodings` as they are. */
export function hostileEncodings(hostile: fc.Arbitrary<string>, encodings: string[]): fc.Arbitrary<string> {
  return fc.oneof(
    hostile.map((text) => encodeURIComponent(text.replace(/[\ud800-\udfff]/g, '').slice(0, 20_000))),
    fc.constantFrom(...encodings),
  );
}

/** Brackets nested 2,000 to 20,000 deep. */
export const deepText = fc.integer({ min: 2_000, max: 20_000 }).map((depth) => `${'['.repeat(depth)}${']'.repeat(depth)}`);
