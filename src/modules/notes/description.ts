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

export function renderDescription(description: string): string {
  if (description === '') return '';
  const withBreaks = description.replace(/\r\n?/g, '\n').replace(/\n/g, '<br>\n');
  return sanitize(withBreaks, options);
}
