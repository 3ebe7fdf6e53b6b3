// Reading `Retry-After` (RFC 9110, section 10.2.3), for the retries of createClient (client.ts), the reconnections of
// events() (events.ts) and the wait a NotesApiError carries (errors.ts).

/** The three HTTP-date forms begin with the day's name (`Sun, 06 Nov 1994 08:49:37 GMT`, `Sunday, 06-Nov-94 ...`,
 *  `Sun Nov  6 ...`); without this check `Date.parse` would read `-5` or `2024` as a year. */
const HTTP_DATE_START = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*,?\s/i;

/**
 * `Retry-After` in milliseconds: delay-seconds (`120`; a decimal fraction is accepted), or an HTTP-date (what is left
 * until then; a date already past is 0). Undefined when the header is absent or unreadable: a negative number, a
 * word, a date in another form. The caller then waits its own backoff, as if no header had come.
 */
export function retryAfterMs(value: string | null | undefined): number | undefined {
  const text = value?.trim();
  if (!text) return undefined;
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text) * 1000;
  if (!HTTP_DATE_START.test(text)) return undefined;
  // HTTP dates are in UTC; the asctime form (ending in the year) does not say so, and Date.parse would read it in
  // the local time zone
  const date = Date.parse(/\d{4}$/.test(text) ? `${text} GMT` : text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}
