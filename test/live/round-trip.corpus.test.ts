// The live editor's schema over every page the tests stored: content it cannot represent is never dropped silently.
// Each content (the corpus the PGlite pass wrote, test/support/live-corpus.ts, and the hand-written pages over the
// sanitizer's allowlist, support/allowlist-pages.ts), sanitized as the page view and a live save do, either
//   - opens live (liveFormOf), and a Yjs document built from it, sent as an update into another document, gives back
//     HTML that means the same (meaning.ts), and means the same again once sanitized (what a live save stores); or
//   - opens in the HTML text area with a reason, which the edit view, served over HTTP, shows beside the text area
//     (for a sample of them).
// Run by scripts/run-tests.sh after the PGlite pass, with LIVE_CORPUS_FROM naming the directory that pass wrote; the
// ordinary passes leave this file out (vitest.config.ts). An empty or missing corpus fails.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { bodyOf, htmlOfYDoc, liveFormOf, yDocOf } from '../../src/modules/live/content.ts';
import { meaningOf } from '../../src/modules/live/meaning.ts';
import { sanitizeHtml } from '../../src/modules/notes/description.ts';
import { escapeHtml } from '../../src/modules/web/html.ts';
import { localeOf } from '../../src/modules/web/i18n.ts';
import { ALLOWLIST_PAGES } from '../support/allowlist-pages.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { makeNote, makePage } from '../support/factories.ts';
import type { CorpusEntry } from '../support/live-corpus.ts';
import { givePassword, signInBrowser } from '../support/oauth.ts';
import { makeScenario } from '../support/scenario.ts';

const HAND_WRITTEN = 'support/allowlist-pages.ts';
const VIEW_SAMPLE = 20;
const VIEW_SAMPLE_BYTES = 64 * 1024;
// the corpus is megabytes of HTML, each content parsed and serialized some ten times over (a page of 1 MB takes
// seconds): one synchronous loop, given the time it needs
const ROUND_TRIP_TIMEOUT = 20 * 60_000;

/** Every distinct content, with the test files that stored it; sorted, so that a run's sample is the same each time. */
function readCorpus(): { collected: number; files: number; contents: { content: string; from: string[] }[] } {
  const dir = process.env.LIVE_CORPUS_FROM;
  if (!dir) throw new Error('LIVE_CORPUS_FROM is not set: scripts/run-tests.sh runs this file after the PGlite pass, which writes the corpus with LIVE_CORPUS_DIR');
  const byContent = new Map<string, Set<string>>();
  const files = readdirSync(dir).filter((name) => name.endsWith('.jsonl'));
  for (const file of files) {
    for (const line of readFileSync(path.join(dir, file), 'utf8').split('\n')) {
      if (line === '') continue;
      const entry = JSON.parse(line) as CorpusEntry;
      byContent.set(entry.content, (byContent.get(entry.content) ?? new Set()).add(entry.from));
    }
  }
  const collected = byContent.size;
  for (const content of ALLOWLIST_PAGES) byContent.set(content, (byContent.get(content) ?? new Set()).add(HAND_WRITTEN));
  const contents = [...byContent].map(([content, from]) => ({ content, from: [...from].sort() }));
  contents.sort((a, b) => (a.content < b.content ? -1 : a.content > b.content ? 1 : 0));
  return { collected, files: files.length, contents };
}

const meaning = (html: string) => meaningOf(bodyOf(html));
const shown = (text: string, length = 300) => JSON.stringify(text.length > length ? `${text.slice(0, length)}…` : text);

type Tried = { content: string; from: string[]; editable: true } | { content: string; from: string[]; editable: false; reason: string };

const corpus = readCorpus();
const tried: Tried[] = [];
const problems: string[] = [];
const problem = (entry: { content: string; from: string[] }, what: string) =>
  problems.push(`${what}\n    content ${shown(entry.content)}\n    from ${entry.from.join(', ')}`);

describe('the live editor over every stored page', () => {
  it('the PGlite pass collected page contents', () => {
    console.log(`live corpus: ${corpus.collected} distinct contents from ${corpus.files} test apps, and ${ALLOWLIST_PAGES.length} hand-written`);
    expect(corpus.files, 'no corpus file: did the PGlite pass run with LIVE_CORPUS_DIR?').toBeGreaterThan(0);
    expect(corpus.collected, 'the corpus files hold no content').toBeGreaterThan(0);
  });

  it('the hand-written pages hold every element and attribute the sanitizer keeps', () => {
    const kept = keptBySanitizer();
    const written = new Set<string>();
    for (const content of ALLOWLIST_PAGES) {
      // read off the sanitizer's own output, not a parse of it: a parser drops a <tr> outside a table, for one
      for (const [, tag, attributes] of sanitizeHtml(content).matchAll(/<([a-z][a-z0-9]*)([^>]*)>/g)) {
        written.add(tag!);
        for (const [, name] of attributes!.matchAll(/\s([a-z][a-z0-9-]*)=/g)) written.add(`${tag}[${name}]`);
      }
    }
    expect(kept).toContain('a[href]');
    expect(kept.filter((item) => !written.has(item)), `kept by the sanitizer, missing from ${HAND_WRITTEN}`).toEqual([]);
  });

  it('each content round-trips through a Yjs document unchanged in meaning, or opens in the text area with a reason', () => {
    const started = performance.now();
    for (const entry of corpus.contents) {
      const clean = sanitizeHtml(entry.content);
      // the edit view and the live server decide on the content as stored, which liveFormOf sanitizes first: the
      // same decision as on `clean` wherever sanitizing twice is sanitizing once
      if (sanitizeHtml(clean) !== clean) problem(entry, `sanitizing it twice is not sanitizing it once\n    once ${shown(clean)}`);
      const form = liveFormOf(clean);
      if (!form.editable) {
        tried.push({ ...entry, editable: false, reason: form.reason });
        if (!/^\s*\S.*[a-z]/i.test(form.reason) || form.reason.trim().length < 10) problem(entry, `opens in the text area with no reason worth the name: ${shown(form.reason)}`);
        continue;
      }
      tried.push({ ...entry, editable: true });
      const source = yDocOf(clean);
      const copy = new Y.Doc();
      Y.applyUpdate(copy, Y.encodeStateAsUpdate(source));
      const html = htmlOfYDoc(copy);
      source.destroy();
      copy.destroy();
      const before = meaning(clean);
      const after = meaning(html);
      if (after !== before) problem(entry, `opens live but the live document changes it\n    meant ${shown(before)}\n    means ${shown(after)}`);
      const saved = meaning(sanitizeHtml(html));
      if (saved !== before) problem(entry, `opens live but a live save (sanitized) changes it\n    meant ${shown(before)}\n    means ${shown(saved)}`);
      if (html !== form.html) problem(entry, `the live document's HTML is not the one liveFormOf gave\n    gave ${shown(form.html)}\n    holds ${shown(html)}`);
    }
    const editable = tried.filter((entry) => entry.editable).length;
    const reasons = new Map<string, number>();
    for (const entry of tried) if (!entry.editable) reasons.set(entry.reason, (reasons.get(entry.reason) ?? 0) + 1);
    const megabytes = (corpus.contents.reduce((sum, entry) => sum + Buffer.byteLength(entry.content), 0) / 1024 / 1024).toFixed(1);
    const collectedInTextArea = tried.filter((entry) => !entry.editable && entry.from.some((from) => from !== HAND_WRITTEN)).length;
    console.log(`live corpus: ${tried.length} contents (${megabytes} MB) tried in ${((performance.now() - started) / 1000).toFixed(0)} s: ${editable} open live, ${tried.length - editable} open in the text area (${collectedInTextArea} of them collected, ${reasons.size} different reasons)`);
    for (const [reason, count] of [...reasons].sort((a, b) => b[1] - a[1]).slice(0, 10)) console.log(`  ${count}: ${reason}`);
    expect(problems.length, `${problems.length} content(s) failed:\n  ${problems.slice(0, 12).join('\n  ')}`).toBe(0);
  }, ROUND_TRIP_TIMEOUT);

  describe('the edit view of a content that opens in the text area', () => {
    let app: TestApp | undefined;
    afterAll(async () => app?.close());

    it(`shows the text area and the note saying why (a sample of up to ${VIEW_SAMPLE})`, async () => {
      const sample = viewSample();
      expect(sample.length, 'no content opens in the text area: the hand-written <ins> alone should').toBeGreaterThan(0);
      app = await startTestApp();
      const cast = await makeScenario(app, { team: 'corpus' });
      const note = await makeNote(app, cast.team, cast.manager.user, { title: 'Corpus', slug: 'corpus' });
      const browser = await signInBrowser(app, cast.manager.user.username, await givePassword(app, cast.manager.user));
      const opensInTextArea = localeOf('en').t.liveOpensInTextArea;
      for (const [index, entry] of sample.entries()) {
        const page = await makePage(app, note, cast.manager, { title: `Sample ${index}`, content: entry.content });
        // the view decides on the content as the API stored it
        const form = liveFormOf(page.content);
        expect(form, `the form of ${shown(page.content)}`).toMatchObject({ editable: false });
        const reason = form.editable ? '' : form.reason;
        const view = await browser.get(`/${cast.team.name}/${note.id}/${page.id}/edit`);
        expect(view.status, `the edit view of ${shown(entry.content)}`).toBe(200);
        expect(view.text, `the note of ${shown(entry.content)}`).toContain(`<p class="card notice">${escapeHtml(opensInTextArea(reason))}</p>`);
        expect(view.text, `the text area of ${shown(entry.content)}`).toContain(`name="content" rows="20">\n${escapeHtml(page.content)}</textarea>`);
        expect(view.text, `no live editor for ${shown(entry.content)}`).not.toContain('id="live-editor"');
      }
      console.log(`live corpus: the edit view of ${sample.length} content(s) that open in the text area shows the text area and why`);
    });
  });
});

/**
 * Up to VIEW_SAMPLE contents that open in the text area, one for each different reason first; of the contents up to
 * VIEW_SAMPLE_BYTES (the pages of a size test all open live, and would take seconds each to try again).
 */
function viewSample(): { content: string; reason: string }[] {
  const candidates: { content: string; reason: string }[] = [];
  for (const entry of corpus.contents) {
    if (Buffer.byteLength(entry.content) > VIEW_SAMPLE_BYTES) continue;
    const form = liveFormOf(sanitizeHtml(entry.content));
    if (!form.editable) candidates.push({ content: entry.content, reason: form.reason });
  }
  const seen = new Set<string>();
  const sample = candidates.filter((entry) => !seen.has(entry.reason) && seen.add(entry.reason)).slice(0, VIEW_SAMPLE);
  for (const entry of candidates) if (sample.length < VIEW_SAMPLE && !sample.includes(entry)) sample.push(entry);
  return sample;
}

// Every element name of HTML (current and obsolete) and every attribute name: what of them the sanitizer keeps is
// found by trying each, so a tag or attribute added to its allowlist shows up here without this file knowing it.
const ELEMENTS = `a abbr acronym address applet area article aside audio b base basefont bdi bdo big blink blockquote body br
  button canvas caption center cite code col colgroup data datalist dd del details dfn dialog dir div dl dt em embed
  fieldset figcaption figure font footer form frame frameset h1 h2 h3 h4 h5 h6 head header hgroup hr html i iframe img
  input ins kbd label legend li link main map mark marquee math menu meta meter nav nobr noembed noframes noscript object
  ol optgroup option output p param picture plaintext pre progress q rb rp rt rtc ruby s samp script search section
  select slot small source span strike strong style sub summary sup svg table tbody td template textarea tfoot th thead
  time title tr track tt u ul var video wbr xmp`.split(/\s+/);
const ATTRIBUTES = `abbr accept accept-charset accesskey action align alink allow alt async autocapitalize autocomplete
  autofocus autoplay background bgcolor border buffered capture charset checked cite class clear code codebase color
  cols colspan content contenteditable controls coords crossorigin data datetime decoding default dir dirname disabled
  download draggable enctype enterkeyhint face for form formaction frameborder headers height hidden high href hreflang
  hspace http-equiv id inert inputmode integrity is ismap itemprop kind label lang language list loading longdesc loop
  low max maxlength media method min minlength multiple muted name nonce noshade novalidate nowrap onclick onerror
  onload open optimum pattern ping placeholder playsinline popover poster preload readonly referrerpolicy rel required
  rev reversed role rows rowspan sandbox scope scrolling selected shape size sizes slot span spellcheck src srcdoc
  srclang srcset start step style summary tabindex target title translate type usemap valign value vspace width wrap
  aria-label data-x`.split(/\s+/);

/** `tag` and `tag[attribute]` for each element and attribute the sanitizer keeps. */
function keptBySanitizer(): string[] {
  const kept: string[] = [];
  for (const tag of ELEMENTS) {
    if (!new RegExp(`<${tag}[\\s/>]`).test(sanitizeHtml(`<${tag}>x</${tag}>`))) continue;
    kept.push(tag);
    for (const name of ATTRIBUTES) {
      const out = sanitizeHtml(`<${tag} ${name}="https://example.com/x">x</${tag}>`);
      if (new RegExp(`<${tag}\\s[^>]*\\b${name}=`).test(out)) kept.push(`${tag}[${name}]`);
    }
  }
  return kept;
}
