// SQL of the notes module that its ORM entities do not express.

/** A note's text in a list, in bytes as stored: its description, sent as `description_html` (db/rows.ts, `findBudgeted`). */
export const NOTE_TEXT_BYTES = 'octet_length(item.description)';
