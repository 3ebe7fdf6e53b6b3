// The bodies of the project's sample requests (test/support/samples.ts) taken apart and put back, for the fuzzers
// (test/api/fuzz.test.ts, the soak's test/soak/fuzz.ts): a form as the JSON body it stands for, its leaves, one leaf
// replaced, and a form as its urlencoded text.

/** The sample's form as the JSON body it stands for: `note[title]` -> {note: {title}}, `mentions[]` -> [..]. */
export function jsonOf(form: Record<string, string | number>): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(form)) {
    const parts = key.replace(/\]/g, '').split('[');
    let at: Record<string, unknown> = body;
    parts.forEach((part, index) => {
      const last = index === parts.length - 1;
      if (last) {
        if (part === '') return;
        at[part] = value;
      } else if (parts[index + 1] === '' && index + 1 === parts.length - 1) {
        at[part] = [value];
      } else {
        at = (at[part] ??= {}) as Record<string, unknown>;
      }
    });
  }
  return body;
}

/** The leaves of a body, as paths of keys. */
export function leaves(value: unknown, at: string[] = []): string[][] {
  if (value === null || typeof value !== 'object') return [at];
  const entries = Object.entries(value as Record<string, unknown>);
  return entries.length === 0 ? [at] : entries.flatMap(([key, inner]) => leaves(inner, [...at, key]));
}

/** A copy of `body` with the leaf at `at` replaced by `value` (the body itself replaced when `at` is empty). */
export function setAt(body: Record<string, unknown>, at: string[], value: unknown): Record<string, unknown> {
  if (at.length === 0) return { value };
  const copy = structuredClone(body);
  let cursor: Record<string, unknown> = copy;
  at.slice(0, -1).forEach((key) => (cursor = cursor[key] as Record<string, unknown>));
  cursor[at.at(-1)!] = value;
  return copy;
}

/** A form as its application/x-www-form-urlencoded text. */
export function formText(form: Record<string, string | number>): string {
  return new URLSearchParams(Object.entries(form).map(([key, value]) => [key, String(value)])).toString();
}
