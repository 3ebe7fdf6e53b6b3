// SQL of the comments module that its ORM entities do not express.

/** A comment's text in a list, in bytes as stored (db/rows.ts, `findBudgeted`). */
export const COMMENT_TEXT_BYTES = 'octet_length(item.body)';
