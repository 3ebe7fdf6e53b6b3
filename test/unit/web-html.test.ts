// The views' template helper: every value escaped unless it is markup the service made (html`...` or trusted()).
import { describe, expect, it } from 'vitest';
import { html, trusted } from '../../src/modules/web/html.ts';
import { stored } from '../../src/modules/web/views/parts.ts';

describe('html`...`', () => {
  it('escapes values, keeps nested templates and trusted markup, joins arrays, drops null/undefined/booleans', () => {
    const title = '<script>alert("x")</script> & \'';
    expect(html`<h1 title="${title}">${title}</h1>`.text).toBe(
      '<h1 title="&#60;script&#62;alert(&#34;x&#34;)&#60;/script&#62; &#38; &#39;">&#60;script&#62;alert(&#34;x&#34;)&#60;/script&#62; &#38; &#39;</h1>',
    );
    expect(html`<ul>${['a', '<b>'].map((item) => html`<li>${item}</li>`)}</ul>`.text).toBe('<ul><li>a</li><li>&#60;b&#62;</li></ul>');
    expect(html`${trusted('<ins>x</ins>')}${null}${undefined}${false}${true}${0}`.text).toBe('<ins>x</ins>0');
  });

  it('shows stored HTML through the sanitizer, headings one level down', () => {
    expect(stored('<h1 onclick="x()">T</h1><script>bad()</script><p style="color:red">p</p><h6>six</h6>').text).toBe('<h2>T</h2><p>p</p><h6>six</h6>');
  });
});
