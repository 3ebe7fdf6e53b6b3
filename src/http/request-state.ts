// What the request flow attaches to express's Request: the request id and logger from the first middleware, the
// entity manager of this request, and the signed-in caller from auth.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Caller } from '../modules/access/caller.ts';
import type { Logger } from './logger.ts';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      requestId: string;
      log: Logger;
      em: EntityManager;
      caller?: Caller;
    }
  }
}

export {};
