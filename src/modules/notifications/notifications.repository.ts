// SQL of the notifications module (shared with the activity log) that its ORM entities do not express.

/**
 * The text a notification or log entry `alias` (with its note joined as `n`) carries in a list, in bytes as stored
 * (db/rows.ts, `budgetedPageOfEntities`): its note's description (as `description_html`), the body of its comment,
 * and the description of its issue or its comment's issue (sent twice: `description`, `description_html`).
 */
export function embeddedTextBytes(alias: string): string {
  return `(coalesce(octet_length(n.description), 0)
    + coalesce((select octet_length(c.body) + coalesce((select 2 * octet_length(i.description) from issues i where i.id = c.issue_id), 0)
                  from comments c where c.id = ${alias}.comment_id), 0)
    + coalesce((select 2 * octet_length(i.description) from issues i where i.id = ${alias}.issue_id), 0))`;
}
