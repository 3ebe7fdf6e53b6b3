// What an HTML fragment means, as one string: two fragments with equal meanings show the same thing. It is what
// decides whether a page may open in the live editor (content.ts): its HTML and the editor's HTML of it must mean
// the same.
//
// Equal meaning ignores what the page view ignores or the editor spells differently: whitespace runs (outside
// <pre>), <b>/<strong>, <i>/<em>, <del>/<s>/<strike>, the order of nested marks, wrappers that carry nothing (<span>,
// <div>, <thead>/<tbody>/<tfoot>, <colgroup>), text directly in a list item, quote or cell versus the same text in a
// paragraph there, empty paragraphs, and attributes the sanitizer or the page view do not keep. Everything else
// counts: text, marks (including <ins>, which the editor has no mark for), links and their targets, images and
// their text and the link they sit in, the block structure, and the exact text of a <pre> with any mark, link or
// image inside it (the editor's code block holds plain text only: <code> there is its own spelling, a <br> a line
// break).
const MARKS: Record<string, string> = { strong: 'strong', b: 'strong', em: 'em', i: 'em', u: 'u', s: 's', del: 's', strike: 's', code: 'code', ins: 'ins', sub: 'sub', sup: 'sup', a: 'a' };
const TEXT_BLOCKS = new Set(['p', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6']);
const CONTAINERS = new Set(['blockquote', 'ul', 'ol', 'li', 'table', 'tr', 'td', 'th']);
const TRANSPARENT_BLOCKS = new Set(['div', 'thead', 'tbody', 'tfoot']);
const DROPPED = new Set(['colgroup', 'col', 'script', 'style']);

type Run = { text: string; marks: string } | { leaf: string };

/** The link among `marks`, as `@a(...)` (an image in a link is a link: the editor must keep it), or ''. */
function linkOf(marks: readonly string[]): string {
  const link = marks.findLast((mark) => mark.startsWith('a('));
  return link === undefined ? '' : `@${link}`;
}

type DomNode = { nodeType: number; nodeName: string; textContent: string | null; childNodes: ArrayLike<DomNode>; getAttribute?(name: string): string | null };

const ELEMENT = 1;
const TEXT = 3;

function tagOf(node: DomNode): string {
  return node.nodeName.toLowerCase();
}

function attr(node: DomNode, name: string): string {
  return node.getAttribute?.(name) ?? '';
}

function markOf(node: DomNode): string | undefined {
  const mark = MARKS[tagOf(node)];
  // a link without a target (the sanitizer drops one it does not allow) is its text
  if (mark === 'a') return attr(node, 'href') === '' ? undefined : `a(${attr(node, 'href')}|${attr(node, 'title')})`;
  return mark;
}

/** The inline runs of `node`'s children under `marks`. */
function collectRuns(node: DomNode, marks: readonly string[], into: Run[]): void {
  for (const child of Array.from(node.childNodes)) {
    if (child.nodeType === TEXT) {
      into.push({ text: child.textContent ?? '', marks: [...new Set(marks)].sort().join(',') });
      continue;
    }
    if (child.nodeType !== ELEMENT) continue;
    const tag = tagOf(child);
    if (DROPPED.has(tag)) continue;
    if (tag === 'br') into.push({ leaf: 'br' });
    else if (tag === 'img') into.push({ leaf: `img(${attr(child, 'src')}|${attr(child, 'alt')}|${attr(child, 'title')})${linkOf(marks)}` });
    else {
      const mark = markOf(child);
      if (mark === undefined && tag !== 'span' && tag !== 'a' && !TRANSPARENT_BLOCKS.has(tag)) into.push({ leaf: `<${tag}>` });
      collectRuns(child, mark === undefined ? marks : [...marks, mark], into);
    }
  }
}

/** Runs as text: whitespace collapsed, trimmed at the block's edges, adjacent runs of the same marks joined. */
function inlineMeaning(runs: readonly Run[]): string {
  const pieces: { text: string; marks: string }[] = [];
  let spaceBefore = true;
  for (const run of runs) {
    if ('leaf' in run) {
      pieces.push({ text: `{${run.leaf}}`, marks: '' });
      spaceBefore = run.leaf === 'br';
      continue;
    }
    let text = run.text.replace(/[ \t\n\r\f]+/g, ' ');
    if (spaceBefore && text.startsWith(' ')) text = text.slice(1);
    if (text === '') continue;
    spaceBefore = text.endsWith(' ');
    const last = pieces[pieces.length - 1];
    if (last && last.marks === run.marks) last.text += text;
    else pieces.push({ text, marks: run.marks });
  }
  while (pieces.length > 0) {
    const last = pieces[pieces.length - 1]!;
    last.text = last.text.replace(/ $/, '');
    if (last.text !== '') break;
    pieces.pop();
  }
  // a break at the end of a block shows nothing
  while (pieces.length > 0 && pieces[pieces.length - 1]!.text === '{br}') pieces.pop();
  return pieces.map((piece) => (piece.marks === '' ? piece.text : `[${piece.marks}]${piece.text}`)).join('');
}

/**
 * A <pre>'s exact text; where anything in it is more than text (a mark, a link, an image, a block), each stretch of
 * it with its marks, so that a code block, which holds text only, is not taken to keep it.
 */
function preMeaning(pre: DomNode): string {
  const pieces: Run[] = [];
  const addText = (text: string, marks: readonly string[]) => {
    const joined = [...new Set(marks)].sort().join(',');
    const last = pieces[pieces.length - 1];
    if (last && 'text' in last && last.marks === joined) last.text += text;
    else pieces.push({ text, marks: joined });
  };
  const walk = (node: DomNode, marks: readonly string[]) => {
    for (const child of Array.from(node.childNodes)) {
      if (child.nodeType === TEXT) {
        if (child.textContent) addText(child.textContent, marks);
        continue;
      }
      if (child.nodeType !== ELEMENT) continue;
      const tag = tagOf(child);
      if (DROPPED.has(tag)) continue;
      if (tag === 'br') addText('\n', marks);
      else if (tag === 'img') pieces.push({ leaf: `img(${attr(child, 'src')}|${attr(child, 'alt')}|${attr(child, 'title')})${linkOf(marks)}` });
      // the editor's own spelling of a code block is <pre><code>
      else if (tag === 'code' || tag === 'span') walk(child, marks);
      else {
        const mark = markOf(child);
        if (mark === undefined && tag !== 'a') pieces.push({ leaf: `<${tag}>` });
        walk(child, mark === undefined ? marks : [...marks, mark]);
      }
    }
  };
  walk(pre, []);
  const only = pieces[0];
  if (only === undefined) return JSON.stringify('');
  if (pieces.length === 1 && 'text' in only && only.marks === '') return JSON.stringify(only.text);
  return pieces.map((piece) => ('leaf' in piece ? `{${piece.leaf}}` : `${piece.marks === '' ? '' : `[${piece.marks}]`}${JSON.stringify(piece.text)}`)).join('');
}

/** The blocks of a container's children: inline content between blocks is one implicit paragraph. */
function blocksOf(node: DomNode, out: string[]): void {
  let runs: Run[] = [];
  const flush = () => {
    const text = inlineMeaning(runs);
    if (text !== '') out.push(`<p>${text}</p>`);
    runs = [];
  };
  for (const child of Array.from(node.childNodes)) {
    if (child.nodeType === TEXT) {
      runs.push({ text: child.textContent ?? '', marks: '' });
      continue;
    }
    if (child.nodeType !== ELEMENT) continue;
    const tag = tagOf(child);
    if (DROPPED.has(tag)) continue;
    if (TRANSPARENT_BLOCKS.has(tag)) {
      flush();
      blocksOf(child, out);
    } else if (TEXT_BLOCKS.has(tag)) {
      flush();
      const inner: Run[] = [];
      collectRuns(child, [], inner);
      const text = inlineMeaning(inner);
      if (text !== '' || tag !== 'p') out.push(`<${tag}>${text}</${tag}>`);
    } else if (tag === 'pre') {
      flush();
      out.push(`<pre>${preMeaning(child)}</pre>`);
    } else if (tag === 'hr') {
      flush();
      out.push('<hr>');
    } else if (CONTAINERS.has(tag)) {
      flush();
      const inner: string[] = [];
      blocksOf(child, inner);
      out.push(`<${tag}>${inner.join('')}</${tag}>`);
    } else {
      const single: Run[] = [];
      collectRuns({ ...child, childNodes: [child] } as DomNode, [], single);
      runs.push(...single);
    }
  }
  flush();
}

/** The meaning of the children of `root` (a parsed fragment's element). */
export function meaningOf(root: DomNode): string {
  const out: string[] = [];
  blocksOf(root, out);
  return out.join('');
}
