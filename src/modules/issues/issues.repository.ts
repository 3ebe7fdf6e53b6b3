// The issues module's SQL, where its ORM entities do not express it: the size of an issue's text in a list, the tags
// of many issues in one statement (issues.loader.ts), and adding tags to an issue (issues.service.ts).
import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * An issue's text in a list, in bytes as stored: its description, sent twice (`description`, `description_html`),
 * and the description of the note it embeds.
 */
export const ISSUE_TEXT_BYTES = '2 * octet_length(item.description) + coalesce((select octet_length(n.description) from notes n where n.id = item.note_id), 0)';

/** The tag names of these issues, each issue's in the order they were added: one statement for a whole list. */
export async function issueTagRows(em: EntityManager, issueIds: readonly number[]): Promise<{ issue_id: number; name: string }[]> {
  return em.execute<{ issue_id: number; name: string }[]>(
    `select it.issue_id, t.name from issue_tags it join tags t on t.id = it.tag_id
      where it.issue_id = any(?::int[]) order by it.added_order`,
    [`{${issueIds.join(',')}}`],
  );
}

/** The keys of the tags the issue has: a tag is matched by its key, never by its spelling. */
export async function issueTagKeys(tx: EntityManager, issueId: number): Promise<Set<string>> {
  const rows = await tx.execute<{ name_key: string }[]>(
    'select t.name_key from issue_tags it join tags t on t.id = it.tag_id where it.issue_id = ?',
    [issueId],
  );
  return new Set(rows.map((row) => row.name_key));
}

/** A tag as added: its name as first spelled and its key (the folded name). */
export type NewTag = { name: string; key: string };

/**
 * Creates the note's tags that do not exist yet, in one statement; a concurrent addition of the same name finds the
 * one row (`on conflict do nothing`). Give them in one order for everyone, or two additions wait on each other.
 */
export async function insertNoteTags(tx: EntityManager, noteId: number, tags: readonly NewTag[], now: Date): Promise<void> {
  await tx.execute(
    `insert into tags (note_id, name, name_key, created_at) values ${tags.map(() => '(?, ?, ?, ?)').join(', ')}
       on conflict (note_id, name_key) do nothing`,
    tags.flatMap((tag) => [noteId, tag.name, tag.key, now]),
  );
}

/** The ids of the note's tags with these keys, by key. */
export async function noteTagIds(tx: EntityManager, noteId: number, keys: readonly string[]): Promise<Map<string, number>> {
  const tags = await tx.execute<{ id: number; name_key: string }[]>(
    `select id, name_key from tags where note_id = ? and name_key in (${keys.map(() => '?').join(', ')})`,
    [noteId, ...keys],
  );
  return new Map(tags.map((tag) => [tag.name_key, tag.id]));
}

/** Gives the issue these tags, one row each in the order given (`added_order` follows the insertion). */
export async function insertIssueTags(tx: EntityManager, issueId: number, tagIds: readonly number[]): Promise<void> {
  await tx.execute(
    `insert into issue_tags (issue_id, tag_id) values ${tagIds.map(() => '(?, ?)').join(', ')} on conflict do nothing`,
    tagIds.flatMap((tagId) => [issueId, tagId]),
  );
}
