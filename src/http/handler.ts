// The shape of an operation handler: it gets the validated input (typed by the generated `<Operation>Data` type)
// and a context, and returns what the operation answers (typed by the generated response type). The wrapper turns
// that into the HTTP answer: 200 with JSON, or 204 for `noContent`.
import type { Request, RequestHandler, Response } from 'express';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../config.ts';
import type { Token } from '../modules/auth/token.entity.ts';
import type { User } from '../modules/users/user.entity.ts';
import type { Logger } from './logger.ts';
import type { Urls } from './urls.ts';

export const noContent = Symbol('noContent');
export type NoContent = typeof noContent;

export type HandlerContext = {
  em: EntityManager;
  user: User;
  token: Token;
  config: Config;
  urls: Urls;
  log: Logger;
  request: Request;
  response: Response;
};

type OperationData = { path?: unknown; query?: unknown; body?: unknown; headers?: unknown };
export type Input<TData extends OperationData> = {
  path: TData['path'] extends undefined ? Record<string, never> : NonNullable<TData['path']>;
  query: NonNullable<TData['query']> extends never ? Record<string, never> : NonNullable<TData['query']>;
  body: TData['body'];
};

export type Operation<TData extends OperationData, TResult> = (input: Input<TData>, context: HandlerContext) => Promise<TResult | NoContent>;

export type AppServices = { config: Config; urls: Urls };

/** Wraps a typed operation as an express handler. */
export function operation<TData extends OperationData, TResult>(fn: Operation<TData, TResult>) {
  return (services: AppServices): RequestHandler =>
    async (req, res) => {
      if (!req.caller) throw new Error('operation reached without an authenticated caller');
      const input = { path: req.params ?? {}, query: req.query ?? {}, body: req.body } as unknown as Input<TData>;
      const context: HandlerContext = {
        em: req.em,
        user: req.caller.user,
        token: req.caller.token,
        config: services.config,
        urls: services.urls,
        log: req.log,
        request: req,
        response: res,
      };
      const result = await fn(input, context);
      if (result === noContent) {
        res.status(204).end();
        return;
      }
      res.status(200).json(result);
    };
}

export type BoundOperation = ReturnType<typeof operation>;
