// Splitting page HTML into the units the three-way merge compares: blocks (paragraphs, headings, list items,
// tables, pre, blockquote, figure), and inside a block, words (by `Intl.Segmenter`, so Japanese and other scripts
// without spaces split into words too) with every tag kept whole. Both splits are lossless: joining the pieces gives
// back the input exactly, so a merge built from pieces never loses or invents a character.

/** Kept whole from their opening tag to the matching closing tag. */
const ATOMIC = new Set(['p', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'pre', 'table', 'blockquote', 'figure']);
/** Their own opening and closing tags are blocks of their own; what is inside is split further. */
const CONTAINERS = new Set(['ul', 'ol', 'div', 'section', 'article', 'header', 'footer', 'aside', 'nav', 'hr']);

const TAG = /<(\/?)([a-zA-Z][a-zA-Z0-9]*)\b[^>]*>/g;

/**
 * The blocks of an HTML text, in order. A list item is one block from `<li>` up to a nested list or its `</li>`
 * (so the nesting shows in the sequence of blocks); text between blocks is a block of its own; whitespace between
 * blocks goes with the block before it.
 */
export function splitBlocks(html: string): string[] {
  const raw: string[] = [];
  let start = 0;
  let atomic: { name: string; depth: number } | undefined;
  const cut = (end: number): void => {
    if (end > start) raw.push(html.slice(start, end));
    start = end;
  };
  TAG.lastIndex = 0;
  for (let match = TAG.exec(html); match !== null; match = TAG.exec(html)) {
    const closing = match[1] === '/';
    const name = match[2]!.toLowerCase();
    const end = match.index + match[0].length;
    if (atomic) {
      if (name === atomic.name) atomic.depth += closing ? -1 : 1;
      if (atomic.depth === 0) {
        cut(end);
        atomic = undefined;
      }
    } else if (ATOMIC.has(name) && !closing && !match[0].endsWith('/>')) {
      cut(match.index);
      atomic = { name, depth: 1 };
    } else if (name === 'li' && !closing) {
      cut(match.index);
    } else if (CONTAINERS.has(name) || name === 'li') {
      cut(match.index);
      cut(end);
    }
  }
  cut(html.length);
  // whitespace-only pieces join the piece before them (or the one after, at the start)
  const blocks: string[] = [];
  for (const piece of raw) {
    if (/^\s*$/.test(piece) && blocks.length > 0) blocks[blocks.length - 1] += piece;
    else if (blocks.length === 1 && /^\s*$/.test(blocks[0]!)) blocks[0] += piece;
    else blocks.push(piece);
  }
  return blocks;
}

const segmenter = new Intl.Segmenter(undefined, { granularity: 'word' });

/** The words, spaces and punctuation of a block, with each tag as one piece. */
export function splitWords(block: string): string[] {
  const pieces: string[] = [];
  let last = 0;
  const text = (end: number): void => {
    if (end <= last) return;
    for (const { segment } of segmenter.segment(block.slice(last, end))) pieces.push(segment);
  };
  TAG.lastIndex = 0;
  for (let match = TAG.exec(block); match !== null; match = TAG.exec(block)) {
    text(match.index);
    pieces.push(match[0]);
    last = match.index + match[0].length;
  }
  text(block.length);
  return pieces;
}
