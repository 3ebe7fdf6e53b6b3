// The baseline of `make bench`'s collab case (scripts/bench-collab.ts): a bare Hocuspocus server, @hocuspocus/server's
// own `Server` with its defaults, no persistence, no authentication, no hooks, in a process of its own, so that its
// CPU time and resident memory are its own. Any document name is accepted and starts empty.
// Started with fork: sends { port } over IPC once it listens on 127.0.0.1 (a port the system picks), and exits on
// SIGTERM or when its parent goes away.
import { Server } from '@hocuspocus/server';

const server = new Server({ name: 'bench-collab-bare', port: 0, address: '127.0.0.1', quiet: true, stopOnSignals: false });
await server.listen();
process.send?.({ port: server.address.port });

let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  void server.destroy().finally(() => process.exit(0));
  setTimeout(() => process.exit(0), 5_000).unref();
};
process.on('SIGTERM', stop);
process.on('disconnect', stop);
