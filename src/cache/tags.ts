// What a kept value shows, as the change feed names it: the database's triggers announce the tags of the notes (n),
// teams (t) and tokens (k) each committed transaction changed (src/db/migrations/0002-revisions.sql), and this
// process drops every kept value tagged with one of them. Tags are made here only, so a cache and the announcement
// can never spell one differently.
declare const tagBrand: unique symbol;

/** A change-feed tag: made by `tags`, or read from an announcement by `tagsOf`. */
export type Tag = string & { readonly [tagBrand]: true };

export const tags = {
  note: (id: number) => `n${id}` as Tag,
  team: (id: number) => `t${id}` as Tag,
  token: (id: number) => `k${id}` as Tag,
};

/** The tags an announcement's payload names (comma-separated, as the triggers write them). */
export function tagsOf(payload: string): Tag[] {
  return payload.split(',').filter((tag) => tag !== '') as Tag[];
}

/** The token a tag names, if it names one. */
export function tokenOf(tag: Tag): number | undefined {
  return tag.startsWith('k') ? Number(tag.slice(1)) : undefined;
}
