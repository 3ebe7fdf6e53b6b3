// SQL of the issues module that its ORM entities do not express.

/**
 * An issue's text in a list, in bytes as stored: its description, sent twice (`description`, `description_html`),
 * and the description of the note it embeds.
 */
export const ISSUE_TEXT_BYTES = '2 * octet_length(item.description) + coalesce((select octet_length(n.description) from notes n where n.id = item.note_id), 0)';
