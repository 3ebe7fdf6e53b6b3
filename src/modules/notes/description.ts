// `description_html`: the note's description as safe HTML. The description is text that may carry basic HTML; line
// breaks become <br>, and an allowlist sanitizer drops scripts, event handlers, styles and any URL scheme other than
// http, https and mailto.
import sanitize from 'sanitize-html';

const options: sanitize.IOptions = {
  allowedTags: [
    'a', 'b', 'strong', 'i', 'em', 'u', 's', 'del', 'ins', 'code', 'pre', 'blockquote', 'p', 'br', 'hr', 'ul', 'ol', 'li',
    'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'span', 'div', 'table', 'thead', 'tbody', 'tr', 'th', 'td', 'img',
  ],
  allowedAttributes: { a: ['href', 'title'], img: ['src', 'alt', 'title'] },
  allowedSchemes: ['http', 'https', 'mailto'],
  allowedSchemesAppliedToAttributes: ['href', 'src'],
  allowProtocolRelative: false,
  disallowedTagsMode: 'discard',
  transformTags: { a: sanitize.simpleTransform('a', { rel: 'nofollow noopener' }) },
};
options.allowedAttributes = { ...(options.allowedAttributes as Record<string, string[]>), a: ['href', 'title', 'rel'] };

/** Any HTML the service itself shows (page content in the HTML views, for instance), made safe. */
export function sanitizeHtml(html: string): string {
  return sanitize(html, options);
}

// Rendering is a pure function of the text, and sanitizing is the costliest part of presenting a note (a list of 100
// notes sanitized 100 descriptions per request): the renderings of recent descriptions are kept, least recently used
// going first.
const rendered = new Map<string, string>();
const RENDERED_ENTRIES = 2000;
const RENDERED_MAX_CHARS = 16 * 1024;

export function renderDescription(description: string): string {
  if (description === '') return '';
  const kept = rendered.get(description);
  if (kept !== undefined) {
    rendered.delete(description);
    rendered.set(description, kept);
    return kept;
  }
  const withBreaks = description.replace(/\r\n?/g, '\n').replace(/\n/g, '<br>\n');
  const html = sanitize(withBreaks, options);
  if (description.length <= RENDERED_MAX_CHARS) {
    rendered.set(description, html);
    if (rendered.size > RENDERED_ENTRIES) rendered.delete(rendered.keys().next().value!);
  }
  return html;
}
