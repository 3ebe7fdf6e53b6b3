import { p } from '@mikro-orm/core';

// Timestamps are kept to the whole second, so a stored record reads `.000Z` exactly as the contract shows, and the
// object returned by a create or update is identical to what a later read returns. Ordering never relies on them
// alone: ids break ties.
export function currentTime(): Date {
  return new Date(Math.floor(Date.now() / 1000) * 1000);
}

export const createdAt = () => p.datetime().columnType('timestamptz(0)').onCreate(() => currentTime());
export const updatedAt = () =>
  p.datetime().columnType('timestamptz(0)').onCreate(() => currentTime()).onUpdate(() => currentTime());
