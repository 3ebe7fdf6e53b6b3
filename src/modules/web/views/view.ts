// What a view function gets: the request, the reader's locale, and `run` for the API operations it presents.
import type { Request, Response } from 'express';
import type { OperationId } from '../../../../generated/operations.gen.ts';
import type { AppServices } from '../../../http/handler.ts';
import type { ScopeKind } from '../../access/scope.ts';
import type { Html } from '../html.ts';
import type { Locale } from '../i18n.ts';
import { layout, type PageFrame } from '../layout.ts';
import { HttpError } from '../../../http/errors.ts';
import { runOperation, viewerOf, type Answer } from '../web.context.ts';

export type View = {
  req: Request;
  res: Response;
  services: AppServices;
  locale: Locale;
  /** The API operation `id` as GET /api/v1 + `apiPath` would run it. */
  run<Id extends OperationId, S extends ScopeKind>(id: Id, kind: S, apiPath: string, path: Record<string, unknown>, query?: Record<string, unknown>): Promise<Answer<Id, S>>;
  /** The whole page around `body`. */
  page(frame: Omit<PageFrame, 'locale' | 'urls' | 'viewer'>, body: Html): Html;
  /** A positive integer from the view's query (`page=2`), or `fallback`. */
  number(name: string, fallback: number): number;
  /** The moment the view shows (`?at=`, RFC 3339: else 400), or undefined for now. */
  moment(): string | undefined;
};

// RFC 3339 date-time, as the API's `at` takes it (format: date-time)
const RFC_3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

export function makeView(services: AppServices, req: Request, res: Response, locale: Locale): View {
  return {
    req,
    res,
    services,
    locale,
    run: (id, kind, apiPath, path, query) => runOperation(services, req, res, id, kind, `/api/v1${apiPath}`, path, query),
    page: (frame, body) => layout({ ...frame, locale, urls: services.urls, viewer: viewerOf(res) }, body),
    number(name, fallback) {
      const value = req.query[name];
      return typeof value === 'string' && /^[1-9][0-9]{0,5}$/.test(value) ? Number(value) : fallback;
    },
    moment() {
      const value = req.query.at;
      if (value === undefined) return undefined;
      if (typeof value !== 'string' || !RFC_3339.test(value) || Number.isNaN(Date.parse(value))) {
        throw new HttpError(400, 'validation_failed', '`at` must be an RFC 3339 date-time, such as 2026-11-01T09:30:00Z');
      }
      return value;
    },
  };
}

/** A path segment as the API's URLs write it. */
export const seg = (value: string | number) => encodeURIComponent(String(value));
