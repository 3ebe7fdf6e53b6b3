// Outside the API: liveness, readiness, the bundled OpenAPI document and the built API reference.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import express from 'express';
import type { Orm } from '../../db/database.ts';
import { HttpError } from '../../http/errors.ts';
import { asProblem, plainRouter } from '../../http/input-guard.ts';
import { openApiDocumentPath } from '../../http/openapi.ts';
import { pingDatabase } from './system.repository.ts';

export const docsPath = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'docs', 'index.html');
/** Redoc's bundle, which the page imports (scripts/docs-offline.ts takes it out of the page when `make docs` builds it). */
export const docsBundlePath = path.join(path.dirname(docsPath), 'redoc.standalone.js');

export type Readiness = { shuttingDown: boolean };
export const readiness: Readiness = { shuttingDown: false };

// The API reference and the document go out compressed, as every answer does (app.ts). The guard
// and 405 with Allow are input-guard.ts's; refusals are problem details.
export function systemRoutes({ orm }: { orm: Orm }): express.Router {
  return plainRouter({ refuse: asProblem }, [
    { path: '/healthz', GET: (_req, res) => void res.json({ status: 'ok' }) },
    {
      path: '/readyz',
      GET: async (req, res) => {
        if (readiness.shuttingDown) throw new HttpError(503, 'shutting_down', 'the server is shutting down');
        try {
          await pingDatabase(orm.em.fork());
        } catch (error) {
          req.log.warn({ error: error instanceof Error ? error.message : String(error) }, 'database not ready');
          throw new HttpError(503, 'database_unavailable', 'the database does not answer');
        }
        res.json({ status: 'ready' });
      },
    },
    { path: '/openapi.json', GET: (_req, res) => res.type('application/json; charset=utf-8').sendFile(openApiDocumentPath) },
    {
      path: ['/docs', '/docs/', '/docs/index.html'],
      GET: (_req, res) => {
        if (!existsSync(docsPath)) throw new HttpError(503, 'docs_not_built', 'the API reference is not built: run `make docs`');
        res.type('text/html; charset=utf-8').sendFile(docsPath);
      },
    },
    {
      // asked for as ?v=<hash of its bytes>: a new build is a new address, so a browser may keep it for good
      path: '/docs/redoc.standalone.js',
      GET: (req, res) => {
        if (!existsSync(docsBundlePath)) throw new HttpError(503, 'docs_not_built', 'the API reference is not built: run `make docs`');
        if (typeof req.query.v === 'string') res.setHeader('Cache-Control', 'public, max-age=31536000, immutable');
        res.type('text/javascript; charset=utf-8').sendFile(docsBundlePath, { cacheControl: typeof req.query.v !== 'string' });
      },
    },
  ]);
}
