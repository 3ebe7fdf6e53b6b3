// Pages written by hand over the sanitizer's whole allowlist (src/modules/notes/description.ts): every element and
// every attribute it keeps, alone and in the places pages put them, and some of what it takes out. The live editor's
// corpus test (test/live/round-trip.corpus.test.ts) tries them beside the pages the tests stored, so the allowlist is
// covered even where no test happened to write an element; that test also checks that this list names everything
// the sanitizer keeps.
export const ALLOWLIST_PAGES: readonly string[] = [
  // empty, and text with no element
  '',
  'Just text, no element at all.',
  'Text <b>and</b> a mark, then <p>a paragraph</p> and text after it.',
  // the marks
  '<p>Plain, <b>b</b>, <strong>strong</strong>, <i>i</i>, <em>em</em>, <u>u</u>, <s>s</s>, <del>del</del> and <code>code</code>.</p>',
  '<p>Nested: <strong><em>bold italic</em></strong>, <em><u>italic underlined</u></em>, <s><b>struck bold</b></s>, <b>bold <i>then italic</i> then bold</b>.</p>',
  '<p>An <ins>inserted</ins> word.</p>',
  '<p><code><b>bold code</b></code> and <code><a href="https://example.com/">a link in code</a></code></p>',
  // links: each attribute, the schemes the sanitizer keeps, and ones it takes out
  '<p><a href="https://example.com/a?b=1&amp;c=2" title="Example site">a link with a title</a>, <a href="http://example.com/">http</a>, <a href="mailto:someone@example.com">mail</a>, <a href="/relative/path">relative</a>, <a href="#part">a fragment</a>, <a href="https://example.com/" rel="nofollow">its own rel</a>.</p>',
  '<p><a>a link with no target</a>, <a title="only a title">titled, no target</a>, <a href="javascript:alert(1)">a refused scheme</a>, <a href="//example.com/">protocol-relative</a>.</p>',
  '<p><a href="https://example.com/"><strong>a bold link</strong></a>, <strong><a href="https://example.com/">a link in bold</a></strong>, <a href="https://example.com/one">one</a><a href="https://example.com/two">two</a>.</p>',
  // images: each attribute, inline and alone, linked, and with a source the sanitizer takes out
  '<p>An <img src="https://example.com/a.png" alt="A picture" title="Its title"> inline image.</p>',
  '<img src="https://example.com/b.png">',
  '<img src="https://example.com/c.png" alt="alone, with text">',
  '<p><a href="https://example.com/"><img src="https://example.com/d.png" alt="a linked image"></a></p>',
  '<p><img alt="no source"></p>',
  '<p><img src="data:image/png;base64,iVBORw0KGgo=" alt="a data URL"></p>',
  // headings
  '<h1>One</h1><h2>Two</h2><h3>Three</h3><h4>Four</h4><h5>Five</h5><h6>Six</h6>',
  '<h2>A <em>styled</em> <a href="https://example.com/">heading</a> with <code>code</code></h2><h3></h3>',
  // lists
  '<ul><li>one</li><li><p>two</p><ul><li>nested</li><li><b>bold</b> item</li></ul></li></ul>',
  '<ol><li>first</li><li>second<ol><li>deeper</li></ol></li><li><p>a paragraph</p><p>and another</p></li></ol>',
  '<ul><li></li></ul><ol></ol><ul></ul>',
  '<li>a list item outside a list</li>',
  // quotes
  '<blockquote><p>Quoted.</p><blockquote>A quote in a quote, as text.</blockquote></blockquote>',
  '<blockquote>Text right in a quote <em>with a mark</em></blockquote><blockquote></blockquote>',
  // code blocks
  '<pre><code>const a = 1;\n  if (a) {\n    return "&lt;b&gt;";\n  }\n</code></pre>',
  '<pre>plain pre\n  indented\n\ttabbed</pre>',
  '<pre>\nafter the line break the parser drops</pre><pre>\n\nafter two line breaks</pre>',
  '<pre>one<br>two</pre>',
  '<pre><b>bold</b> in a code block</pre>',
  '<pre>a <a href="https://example.com/">link</a> in a code block</pre>',
  '<pre>an <img src="https://example.com/e.png" alt="image"> in a code block</pre>',
  '<pre><span>a span</span> in a code block</pre><pre></pre>',
  // breaks and rules
  '<p>line one<br>line two<br><br>after a blank line<br></p><hr><p>after the rule</p><hr>',
  '<br><p>a break before</p>',
  // wrappers that carry nothing
  '<div><p>In a div.</p><div><span>a span</span> and more text</div></div>',
  '<p>a <span>span</span> in a paragraph, and <span><b>a mark in one</b></span></p>',
  '<p>a paragraph <div>with a div in it</div> and after</p>',
  // tables
  '<table><thead><tr><th>Name</th><th>Value</th></tr></thead><tbody><tr><td>a</td><td><strong>1</strong></td></tr><tr><td><p>a paragraph</p><ul><li>a list in a cell</li></ul></td><td></td></tr></tbody></table>',
  '<table><tr><td>no tbody</td><td>two</td></tr><tr><th>a header cell in a row</th><td>cell</td></tr></table>',
  '<table><tbody><tr><td><pre>code in a cell</pre></td><td><img src="https://example.com/f.png" alt="an image in a cell"></td></tr></tbody></table>',
  '<table></table><table><tr></tr></table>',
  '<tr><td>a row outside a table</td></tr>',
  // whitespace and character references
  '<p>  spaced   out\n text  </p>\n\n<p>\tafter a tab</p>',
  '<p>&lt;tag&gt; &amp; &quot;quotes&quot; &#39;apostrophe&#39; a&nbsp;non-breaking space &#x1F600; caf\u00e9</p>',
  // what the sanitizer takes out, around what it keeps
  '<script>alert(1)</script><p style="color:red" onclick="alert(2)" class="x" id="y">styled</p><iframe src="https://example.com/"></iframe><p>after</p>',
  '<p>a <font color="red">font</font>, a <sub>sub</sub> and <sup>sup</sup>, a <mark>mark</mark>, a <strike>strike</strike></p>',
  '<dl><dt>term</dt><dd>definition</dd></dl><section><h2>in a section</h2></section><details><summary>more</summary>hidden</details>',
  // a page as people write them, with everything together
  '<h1>Runbook</h1>\n<p>Deploy from a <a href="https://example.com/releases" title="Releases">tagged release</a>; <strong>never</strong> from <code>main</code>.</p>\n<ol>\n  <li>Check the <em>dashboard</em>.</li>\n  <li>Run:<pre><code>make deploy\n</code></pre></li>\n</ol>\n<blockquote><p>Page the on-call<br>if it fails.</p></blockquote>\n<table>\n<thead><tr><th>Step</th><th>Owner</th></tr></thead>\n<tbody><tr><td>deploy</td><td>ops</td></tr></tbody>\n</table>\n<hr>\n<p><img src="https://example.com/diagram.png" alt="The diagram" title="Diagram"></p>\n',
];
