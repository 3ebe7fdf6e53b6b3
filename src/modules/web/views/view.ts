// What a view function gets: the request, the reader's locale, and `run` for the API operations it presents.
import type { Request, Response } from 'express';
import type { OperationId } from '../../../../generated/operations.gen.ts';
import type { AppServices } from '../../../http/handler.ts';
import type { ScopeKind } from '../../access/scope.ts';
import type { Html } from '../html.ts';
import type { Locale } from '../i18n.ts';
import { layout, type PageFrame } from '../layout.ts';
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
};

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
  };
}

/** A path segment as the API's URLs write it. */
export const seg = (value: string | number) => encodeURIComponent(String(value));
