// `time_ago`: how long ago something happened, as text in the reader's language (users' `lang`: `en` or `ja`),
// in the buckets of the old service (Rails' time_ago_in_words: "less than a minute", "3 minutes", "about 1 hour",
// "2 days", "about 1 month", "over 2 years"), worded by Intl.RelativeTimeFormat so each language reads naturally.
export type Language = 'en' | 'ja';

const MINUTE = 60;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const MONTH = 30 * DAY;
const YEAR = 365 * DAY;

const formats = new Map<Language, Intl.RelativeTimeFormat>();
function format(language: Language): Intl.RelativeTimeFormat {
  let found = formats.get(language);
  if (!found) formats.set(language, (found = new Intl.RelativeTimeFormat(language, { numeric: 'always' })));
  return found;
}

const qualifiers: Record<Language, { lessThanAMinute: string; about: (text: string) => string; over: (text: string) => string }> = {
  en: { lessThanAMinute: 'less than a minute ago', about: (text) => `about ${text}`, over: (text) => `over ${text}` },
  ja: { lessThanAMinute: '1分以内', about: (text) => `約${text}`, over: (text) => text.replace(/前$/, '以上前') },
};

/** `then` relative to `now` (a future time reads as now: clocks of machines differ by a little). */
export function timeAgo(then: Date, now: Date, language: Language): string {
  const seconds = Math.max(0, Math.round((now.getTime() - then.getTime()) / 1000));
  const words = qualifiers[language];
  const ago = (count: number, unit: Intl.RelativeTimeFormatUnit) => format(language).format(-count, unit);
  if (seconds < 30) return words.lessThanAMinute;
  if (seconds < 45 * MINUTE) return ago(Math.max(1, Math.round(seconds / MINUTE)), 'minute');
  if (seconds < 90 * MINUTE) return words.about(ago(1, 'hour'));
  if (seconds < DAY) return words.about(ago(Math.round(seconds / HOUR), 'hour'));
  if (seconds < 30 * DAY) return ago(Math.max(1, Math.round(seconds / DAY)), 'day');
  if (seconds < 60 * DAY) return words.about(ago(1, 'month'));
  if (seconds < YEAR) return ago(Math.round(seconds / MONTH), 'month');
  const years = Math.floor(seconds / YEAR);
  return seconds - years * YEAR < 3 * MONTH ? words.about(ago(years, 'year')) : words.over(ago(years, 'year'));
}

export function languageOf(user: { lang: string }): Language {
  return user.lang === 'ja' ? 'ja' : 'en';
}
