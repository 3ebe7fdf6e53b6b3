// What a file is and how it is answered (src/modules/attachments/content.ts, upload.ts): pure functions.
import { describe, expect, it } from 'vitest';
import { contentDisposition, isImage, isInline, parseRange, sniffType } from '../../src/modules/attachments/content.ts';
import { cleanFilename } from '../../src/modules/attachments/upload.ts';

describe('sniffType', () => {
  it('believes the bytes only', async () => {
    expect(await sniffType(Buffer.from('%PDF-1.7\n%\xe2\xe3\n', 'latin1'))).toBe('application/pdf');
    expect(await sniffType(Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46, 0x49, 0x46, 0, 1]))).toBe('image/jpeg');
    expect(await sniffType(Buffer.from('会議の議事録\n'))).toBe('text/plain');
    // a UTF-8 character cut by the end of the sniffed head is still text
    expect(await sniffType(Buffer.from('議事録').subarray(0, 7))).toBe('text/plain');
    expect(await sniffType(Buffer.from([0, 159, 146, 150]))).toBe('application/octet-stream');
    expect(await sniffType(Buffer.alloc(0))).toBe('application/octet-stream');
  });

  it('shows inline only images that run nothing, and PDF', () => {
    expect(['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'application/pdf'].every(isInline)).toBe(true);
    expect(['image/svg+xml', 'text/html', 'text/plain', 'application/octet-stream'].some(isInline)).toBe(false);
    expect([isImage('image/png'), isImage('application/pdf'), isImage('image/svg+xml')]).toEqual([true, false, false]);
  });
});

describe('contentDisposition', () => {
  it('gives ASCII names as they are and others as RFC 8187 ext-values with an ASCII fallback', () => {
    expect(contentDisposition('report.pdf', true)).toBe('inline; filename="report.pdf"');
    expect(contentDisposition('仕様書 v2.docx', false)).toBe(`attachment; filename="___ v2.docx"; filename*=UTF-8''%E4%BB%95%E6%A7%98%E6%9B%B8%20v2.docx`);
    expect(contentDisposition('100% "done".txt', false)).toBe(`attachment; filename="100_ _done_.txt"; filename*=UTF-8''100%25%20%22done%22.txt`);
  });
});

describe('parseRange', () => {
  it.each([
    [undefined, { kind: 'full' }],
    ['bytes=0-0', { kind: 'partial', start: 0, end: 0 }],
    ['bytes=5-', { kind: 'partial', start: 5, end: 9 }],
    ['bytes=5-100', { kind: 'partial', start: 5, end: 9 }],
    ['bytes=-4', { kind: 'partial', start: 6, end: 9 }],
    ['bytes=-40', { kind: 'partial', start: 0, end: 9 }],
    ['bytes=10-', { kind: 'unsatisfiable' }],
    ['bytes=-0', { kind: 'unsatisfiable' }],
    ['bytes=5-2', { kind: 'full' }],
    ['bytes=0-1,3-4', { kind: 'full' }],
    ['items=0-1', { kind: 'full' }],
    ['bytes=-', { kind: 'full' }],
  ] as const)('%s of 10 bytes', (header, expected) => {
    expect(parseRange(header, 10)).toEqual(expected);
  });
});

describe('cleanFilename', () => {
  it('keeps the last path segment, drops control characters, and keeps the extension of a long name', () => {
    expect(cleanFilename('C:\\Users\\me\\写真.png')).toBe('写真.png');
    expect(cleanFilename('../../etc/passwd')).toBe('passwd');
    expect(cleanFilename('a\u0000b\u001fc.txt')).toBe('abc.txt');
    expect(cleanFilename('..')).toBe('file');
    expect(cleanFilename(undefined)).toBe('file');
    const long = cleanFilename(`${'あ'.repeat(300)}.pdf`);
    expect([...long]).toHaveLength(255);
    expect(long.endsWith('あ.pdf')).toBe(true);
  });
});
