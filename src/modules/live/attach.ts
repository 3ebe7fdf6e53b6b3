// The live editor's WebSocket path on the service's HTTP server. Its code (Hocuspocus, Yjs, the editor's schema and
// a DOM to parse HTML in) is loaded at the first connection, not at start: a server nobody edits live on holds none
// of it.
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { ChangeFeed } from '../../db/change-feed.ts';
import type { AppServices } from '../../http/handler.ts';
import type { Logger } from '../../http/logger.ts';
import type { Live } from './live.server.ts';

export const LIVE_PATH = '/live';

export type LiveDeps = { services: AppServices; orm: MikroORM; logger: Logger; changes: ChangeFeed };

export type LiveHost = {
  /** Takes over the WebSocket upgrades of LIVE_PATH on `server`; any other upgrade is refused (400). */
  attach(server: Server): void;
  /** The live documents of this process, once anyone connected (for tests). */
  loaded(): Live | undefined;
  /** Saves what is open and closes every live connection. */
  close(): Promise<void>;
};

export function liveHost(deps: LiveDeps): LiveHost {
  let live: Promise<Live> | undefined;
  let ready: Live | undefined;
  const load = () => {
    live ??= import('./live.server.ts').then(({ createLive }) => createLive(deps)).then((made) => (ready = made));
    return live;
  };
  const upgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = request.url ?? '';
    if (url !== LIVE_PATH && !url.startsWith(`${LIVE_PATH}?`)) {
      socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Type: text/plain\r\n\r\nWebSocket connections are taken at /live only\n');
      return;
    }
    load().then((loaded) => loaded.upgrade(request, socket, head), (error: unknown) => {
      deps.logger.error({ error: error instanceof Error ? error.message : String(error) }, 'the live editor could not start');
      socket.destroy();
    });
  };
  return {
    attach(server) {
      server.on('upgrade', upgrade);
    },
    loaded: () => ready,
    async close() {
      if (live) await (await live).close();
    },
  };
}
