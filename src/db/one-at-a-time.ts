// Work on one key (a page's id) done one at a time in this process. Writes to one page queue on its row lock in the
// database anyway; queueing them here first keeps the waiting ones from holding pooled connections (and PGlite's
// one session) while they wait, so other requests go on. Across processes the row lock still decides.
const tails = new Map<string, Promise<void>>();

export async function oneAtATime<T>(key: string, work: () => Promise<T>): Promise<T> {
  const previous = tails.get(key) ?? Promise.resolve();
  const run = previous.then(work);
  const tail = run.then(() => undefined, () => undefined);
  tails.set(key, tail);
  try {
    return await run;
  } finally {
    if (tails.get(key) === tail) tails.delete(key);
  }
}
