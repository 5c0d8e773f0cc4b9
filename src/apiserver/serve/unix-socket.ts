/** Unix domain sockets the API server listens on (kcm up's `apiserver.sock`, the TLS thread's `tls-front.sock`). */
import { rmSync } from 'node:fs';
import type { Server } from 'node:net';

/** Listens on a Unix domain socket, replacing a stale socket file (a previous run killed before it could remove it). */
export async function listenOnSocket(srv: Server, path: string): Promise<void> {
  rmSync(path, { force: true });
  await new Promise<void>((resolveListen, rejectListen) => {
    srv.once('error', rejectListen);
    srv.listen(path, () => {
      srv.off('error', rejectListen);
      resolveListen();
    });
  });
}
