// Serialising answers. A presented object that a response embeds many times (the team of every note in a list, the
// note of every page, the page of every version) is marked `shared` by its presenter: it is serialised once per
// response and its JSON copied in wherever it appears, instead of walking it again each time (a list of 100 notes
// of a 200-member team embeds 20,000 users).
import { randomBytes } from 'node:crypto';

const sharedObjects = new WeakSet<object>();

/** Marks a presented object as embedded in several places of one response. */
export function shared<T extends object>(value: T): T {
  sharedObjects.add(value);
  return value;
}

const serialisedBefore = new WeakMap<object, string>();

/** Serialises a presented object now and keeps the text with it, for answers served again (cached views). */
export function serialiseOnce(value: object): string {
  let text = serialisedBefore.get(value);
  if (text === undefined) {
    text = toJson(value);
    serialisedBefore.set(value, text);
  }
  return text;
}

/** JSON.stringify, with each shared object serialised once (and an object serialised before not again). */
export function toJson(value: unknown): string {
  if (value !== null && typeof value === 'object') {
    const before = serialisedBefore.get(value);
    if (before !== undefined) return before;
  }
  const marker = `\u0000${randomBytes(8).toString('hex')}:`;
  const texts: string[] = [];
  const indexes = new Map<object, number>();
  const replacer = function (this: unknown, key: string, item: unknown): unknown {
    if (key === '' || item === null || typeof item !== 'object' || !sharedObjects.has(item)) return item;
    let index = indexes.get(item);
    if (index === undefined) {
      index = texts.length;
      texts.push(''); // reserve the slot: a shared object never contains itself
      indexes.set(item, index);
      texts[index] = serialise(item);
    }
    return `${marker}${index}`;
  };
  // placeholders are strings, so they come out quoted and with their NUL escaped; a client's own text can never hold
  // the random marker
  const quoted = new RegExp(`"${JSON.stringify(marker).slice(1, -1).replace(/\\/g, '\\\\')}(\\d+)"`, 'g');
  const serialise = (item: unknown): string => {
    const text = JSON.stringify(item, replacer);
    return texts.length === 0 ? text : text.replace(quoted, (_, index: string) => texts[Number(index)]!);
  };
  return serialise(value);
}
