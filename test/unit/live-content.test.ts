// A page's HTML in the live editor (src/modules/live/content.ts, meaning.ts): what opens live, what the editor makes
// of it, and what opens in the HTML text area instead. The cases are the ones the corpus test
// (test/live/round-trip.corpus.test.ts) or a reading of it found: each was dropped silently before.
import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { bodyOf, editabilityOf, editorHtml, htmlOfYDoc, LIVE_MAX_CONTENT_BYTES, liveFormOf, yDocOf } from '../../src/modules/live/content.ts';
import { meaningOf } from '../../src/modules/live/meaning.ts';

/** What a live document built from `content` holds, once sent to another document as an update. */
function throughYjs(content: string): string {
  const copy = new Y.Doc();
  Y.applyUpdate(copy, Y.encodeStateAsUpdate(yDocOf(content)));
  return htmlOfYDoc(copy);
}

describe('liveFormOf', () => {
  it.each([
    // a code block holds plain text: the marks, links and images in a <pre> were lost, and the meaning compared only
    // the <pre>'s text
    ['a mark in a <pre>', '<pre><b>bold</b> in a code block</pre>'],
    ['a link in a <pre>', '<pre>a <a href="https://example.com/">link</a> in a code block</pre>'],
    ['an image in a <pre>', '<pre>an <img src="https://example.com/e.png" alt="image"> in a code block</pre>'],
    // the schema keeps a link around an image, a Yjs document does not (it keeps the marks of text only), and the
    // meaning left out the link an image sits in
    ['a linked image', '<p><a href="https://example.com/"><img src="https://example.com/d.png" alt="a linked image"></a></p>'],
    ['an <ins>', '<p>An <ins>inserted</ins> word.</p>'],
  ])('%s opens in the text area, with the reason', (_case, content) => {
    const form = liveFormOf(content);
    expect(form.editable).toBe(false);
    expect(form.editable ? '' : form.reason).toMatch(/^the editor cannot keep all of this page's HTML \(it would change ".+"\)$/s);
  });

  it.each([
    // a browser's parser drops the line break right after <pre>; the editor kept it as text, and its own
    // <pre><code> showed it as a blank first line
    ['a line break after <pre>', '<pre>\nfirst line\n</pre>', '<pre><code>first line\n</code></pre>'],
    ['two line breaks after <pre>', '<pre>\n\nafter a blank line</pre>', '<pre><code>\nafter a blank line</code></pre>'],
    ['a line break in <pre><code>', '<pre><code>\nkept</code></pre>', '<pre><code>\nkept</code></pre>'],
    // a <br> in a <pre> is a line break, which the code block holds as one
    ['a <br> in a <pre>', '<pre>one<br>two</pre>', '<pre><code>one\ntwo</code></pre>'],
    ['a <span> in a <pre>', '<pre><span>a span</span> in a code block</pre>', '<pre><code>a span in a code block</code></pre>'],
    ['an image, not linked', '<p>An <img src="https://example.com/a.png" alt="A" title="T"> image.</p>', '<p>An <img src="https://example.com/a.png" alt="A" title="T"> image.</p>'],
  ])('%s opens live, as the editor spells it', (_case, content, html) => {
    expect(liveFormOf(content)).toEqual({ editable: true, html });
    expect(throughYjs(content)).toBe(html);
  });
});

describe('editorHtml', () => {
  it('is what a live document built from the content holds (a break in a mark loses the mark in Yjs)', () => {
    const content = '<p><b>bold<br>on two lines</b></p>';
    expect(editorHtml(content)).toBe(throughYjs(content));
    expect(editorHtml(content)).toBe('<p><strong>bold</strong><br><strong>on two lines</strong></p>');
  });
});

describe('meaningOf', () => {
  const meaning = (html: string) => meaningOf(bodyOf(html));

  it('a <pre> is its text, with any mark, link or image in it', () => {
    expect(meaning('<pre>plain\n  text</pre>')).toBe('<pre>"plain\\n  text"</pre>');
    expect(meaning('<pre><code>plain</code></pre>')).toBe(meaning('<pre>plain</pre>'));
    expect(meaning('<pre><b>x</b></pre>')).not.toBe(meaning('<pre>x</pre>'));
    expect(meaning('<pre><a href="https://example.com/">x</a></pre>')).not.toBe(meaning('<pre>x</pre>'));
    expect(meaning('<pre>a<img src="https://example.com/i.png">b</pre>')).not.toBe(meaning('<pre>ab</pre>'));
    expect(meaning('<pre>a<br>b</pre>')).toBe(meaning('<pre>a\nb</pre>'));
  });

  it('an image is its source, text, title and the link it sits in', () => {
    const image = '<img src="https://example.com/i.png" alt="i">';
    expect(meaning(`<p><a href="https://example.com/">${image}</a></p>`)).not.toBe(meaning(`<p>${image}</p>`));
    expect(meaning(`<p><a href="https://example.com/">${image}</a></p>`)).not.toBe(meaning(`<p><a href="https://example.com/other">${image}</a></p>`));
    expect(meaning(`<p><b>${image}</b></p>`)).toBe(meaning(`<p>${image}</p>`));
  });
});

describe('editabilityOf', () => {
  it('a page past LIVE_MAX_CONTENT_BYTES opens in the text area, saying so; one under it as liveFormOf says', () => {
    const paragraph = '<p>An ordinary paragraph of words.</p>';
    const large = paragraph.repeat(Math.ceil((LIVE_MAX_CONTENT_BYTES + 1) / paragraph.length));
    expect(editabilityOf(large)).toEqual({ editable: false, reason: `the page is larger than the live editor opens (${LIVE_MAX_CONTENT_BYTES / 1024} KiB)` });
    const small = paragraph.repeat(10);
    expect(editabilityOf(small)).toEqual({ editable: true, reason: '' });
    // the same content again: the same answer (from what was remembered)
    expect(editabilityOf(small)).toEqual({ editable: true, reason: '' });
    const kept = '<p>Keep <ins>this</ins> mark.</p>';
    const form = liveFormOf(kept);
    expect(form.editable).toBe(false);
    expect(editabilityOf(kept)).toEqual({ editable: false, reason: (form as { reason: string }).reason });
  });
});
