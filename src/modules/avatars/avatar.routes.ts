// Generated avatars: a symmetric 5x5 pattern and colour derived from the kind and id alone, so an avatar says
// nothing about the object (a private note's avatar reveals no title) and needs no database read.
import { createHash } from 'node:crypto';
import express from 'express';

const kinds = new Set(['users', 'teams', 'notes']);

export function avatarSvg(kind: string, id: number): string {
  const digest = createHash('sha256').update(`${kind}:${id}`).digest();
  const hue = digest.readUInt16BE(0) % 360;
  const colour = `hsl(${hue} 55% 50%)`;
  const cells: string[] = [];
  for (let row = 0; row < 5; row += 1) {
    for (let column = 0; column < 3; column += 1) {
      if ((digest[2 + row * 3 + column]! & 1) === 1) {
        cells.push(`<rect x="${column * 16 + 4}" y="${row * 16 + 4}" width="16" height="16"/>`);
        if (column < 2) cells.push(`<rect x="${(4 - column) * 16 + 4}" y="${row * 16 + 4}" width="16" height="16"/>`);
      }
    }
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" width="88" height="88" viewBox="0 0 88 88"><rect width="88" height="88" fill="#f0f0f0"/><g fill="${colour}">${cells.join('')}</g></svg>`;
}

export function avatarRoutes(): express.Router {
  const router = express.Router();
  router.get('/avatars/:kind/:file', (req, res, next) => {
    const match = /^(\d{1,12})\.svg$/.exec(req.params.file);
    if (!kinds.has(req.params.kind) || !match) return next();
    res.setHeader('Cache-Control', 'public, max-age=86400');
    res.type('image/svg+xml').send(avatarSvg(req.params.kind, Number(match[1])));
  });
  return router;
}
