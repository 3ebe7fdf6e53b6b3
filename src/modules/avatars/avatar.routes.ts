// Generated avatars: a symmetric 5x5 pattern and colour derived from the kind and id alone, so an avatar says
// nothing about the object (a private note's avatar reveals no title) and needs no database read.
import { createHash } from 'node:crypto';
import express from 'express';
import { asProblem, plainRouter } from '../../http/input-guard.ts';

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

/** `/avatars/{users|teams|notes}/{id}.svg`, id an integer of the API's range; any other path there is no avatar (404). */
const isAvatar: express.RequestHandler = (req, _res, next) => {
  const match = /^([0-9]{1,10})\.svg$/.exec(req.params.file as string);
  next(kinds.has(req.params.kind as string) && match && Number(match[1]) <= 2_147_483_647 ? undefined : 'route');
};

export function avatarRoutes(): express.Router {
  // the guard and 405 with Allow are input-guard.ts's; refusals are problem details
  return plainRouter({ refuse: asProblem }, [{
    path: '/avatars/:kind/:file',
    precondition: isAvatar,
    GET: (req, res) => {
      const id = Number(/^[0-9]+/.exec(req.params.file as string)![0]);
      res.setHeader('Cache-Control', 'public, max-age=86400');
      res.type('image/svg+xml').send(avatarSvg(req.params.kind as string, id));
    },
  }]);
}
