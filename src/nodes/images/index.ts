/**
 * Known images: what a container of a well-known image runs, what its
 * programs print, and what it answers over HTTP. Images are matched by the
 * repository basename (any registry, tag or digest): `k8s.gcr.io/e2e-test-images/agnhost:2.21`,
 * `agnhost`, `docker.io/library/nginx:1.14-alpine@sha256:...` all match.
 *
 * ```ts
 * const argv = containerArgv(pod.spec.containers[0]);          // ['/agnhost', 'pause'] for a bare agnhost
 * seedImageFiles(container.image, fs);                          // /usr/share/nginx/html/index.html, ...
 * const p = startProcess({ argv, fs, clock, external: knownPrograms({ podName, podIP, hostname, image }) });
 * for (const port of servedPorts(argv, container)) {
 *   const serve = httpServer(argv, { fs, hostname, podIP, env, now: () => clock, startedAt, port, image, runShell, fetch });
 *   serve?.({ method: 'GET', path: '/', query: new URLSearchParams(), headers: {}, clientIP: '10.244.1.7' });
 * }
 * ```
 *
 * Default ENTRYPOINT / CMD (`containerArgv`; `command` replaces ENTRYPOINT and drops CMD, `args` alone replace CMD;
 * an unknown image without `command` gives its `args`, i.e. `[]` = "runs until stopped", the caller's rule):
 *
 * | Image (basename) | ENTRYPOINT | CMD | Serves |
 * |------------------|------------|-----|--------|
 * | `busybox` | | `sh` | |
 * | `alpine` | | `/bin/sh` | |
 * | `nginx` (< 1.19) | | `nginx -g "daemon off;"` | HTTP 80 |
 * | `nginx` (>= 1.19, `latest`) | `/docker-entrypoint.sh` | `nginx -g "daemon off;"` | HTTP 80 |
 * | `httpd` | | `httpd-foreground` | HTTP 80 |
 * | `agnhost` | `/agnhost` | `pause` | per subcommand |
 * | `pause` | `/pause` | | |
 * | `redis` | `docker-entrypoint.sh` | `redis-server` | (6379, not HTTP) |
 * | `perl` | | `perl5.26.3 -de0` (from the tag) | |
 *
 * Programs (`knownPrograms`, argv[0] as a bare name or any path; SIGTERM as PID 1):
 *
 * | Program | Behaviour | SIGTERM |
 * |---------|-----------|---------|
 * | `agnhost mounttest` | flags `--fs_type --new_file_0644/0666/0660/0777 --file_mode --file_perm --file_owner --file_content --file_content_in_loop --retry_time --break_on_expected_content`, in agnhost's order; prints `mount type of "P": tmpfs` (or the statfs magic, default 61267 = ext4; option `fsType`), `content of file "P": ...`, `mode of file "P": dgtrwxrwxrwx` (Go `os.FileMode`), `perms of file "P": -rw-r--r--`, `owner UID of "P": 0` / `owner GID of "P": 0`, Go error texts; exit 1 on any error. `--file_content_in_loop` is a script on virtual time: a read every 2 s for `--retry_time` s (default 180), stopping at `mount-tester new file\n` unless `--break_on_expected_content=false` | exits 0 (script) |
 * | `agnhost logs-generator -t N -d DUR` | N klog Info lines on stderr evenly over DUR (a script on virtual time; choices seeded by the pod name) | exit 2 |
 * | `agnhost entrypoint-tester ARGS` | prints `[argv0 entrypoint-tester ARGS]` (Go `%v` of os.Args), exit 0 | |
 * | `agnhost pause` | prints `Paused`, runs until stopped | exit 2 |
 * | `agnhost netexec [--http-port=8080] [--udp-port=8081] [--http-override=P]` | logs `Started HTTP server on port N` / `Started UDP server on port N`; HTTP server (below) | exit 2 (Go default) |
 * | `agnhost serve-hostname [--port=9376] [--http] [--tcp] [--udp] [--close]` | logs `Serving on port N.`; `--tcp`/`--udp` need `--http=false` (else `Can't server TCP/UDP mode and HTTP mode at the same time`, exit 1) | ignored (it sleeps 60 s: the grace period ends first) |
 * | `agnhost liveness` | HTTP 8080 | exit 2 |
 * | `agnhost test-webserver [--port=80]` | HTTP file server of `/` | exit 2 |
 * | `agnhost porter [--json-response]` | HTTP on every `SERVE_PORT_N` | exit 2 |
 * | `agnhost dns-suffix` / `dns-server-list` / `etc-hosts` | `search` / `nameserver` fields of /etc/resolv.conf joined by `,`; /etc/hosts | |
 * | `agnhost` other real subcommands | run until stopped (not simulated) | |
 * | `agnhost BOGUS` | `Error: unknown command "BOGUS" for "agnhost"`, exit 1 | |
 * | `nginx -g 'daemon off;'` | runs until stopped; without `daemon off;` it daemonizes (exit 0); `-v`, `-t`, `-s` | exit 0 |
 * | `httpd-foreground`, `httpd -DFOREGROUND` | runs until stopped | exit 0 |
 * | `/pause`, `pause` (k8s.gcr.io/pause) | runs until stopped | exit 0 |
 * | `docker-entrypoint.sh ARGS` | `exec ARGS` | |
 * | `redis-server` | runs until stopped | exit 0 |
 *
 * Go programs with no SIGTERM handler exit with code 2 as PID 1: the Go runtime catches SIGTERM,
 * resets it to SIG_DFL and re-raises it; the kernel drops a default-action signal sent to a PID
 * namespace's init from inside, so the runtime falls through to `exit(2)`.
 *
 * HTTP (`servedPorts`, `httpServer`; net/http adds `Date`, `Content-Length`, a sniffed `Content-Type`):
 *
 * | Program | Port | Answers |
 * |---------|------|---------|
 * | nginx | 80 | static files of `/usr/share/nginx/html` (index `index.html`/`index.htm`), `Server: nginx/1.14.2` (version from the tag), `ETag`, `Last-Modified`; a directory without an index -> 403, missing -> 404, a directory without `/` -> 301, other methods -> 405; nginx's error pages byte for byte; HEAD |
 * | httpd | 80 | static files of `/usr/local/apache2/htdocs`, `Server: Apache/2.4.38 (Unix)`; a directory without index.html -> autoindex listing; Apache's 404/301 pages |
 * | netexec | `--http-port` (8080) | `/` (and any unknown path) `NOW: <Go time.Now()>`; `/echo?msg=&code=`; `/clientip` (`ip:port`); `/hostname`, `/hostName`; `/healthz` (200); `/exit?code=&wait=&timeout=` and `/shutdown` (response `exit: { code, afterMs, reset }`: the caller ends the process); `/shell?cmd=` (`ctx.runShell`; `{"output":...,"error":"exit status N"}`); `/dial?request=&host=&port=&protocol=http\|udp&tries=` (`ctx.fetch` / `ctx.udp`; `{"errors":[...],"responses":[...]}`); `/redirect?location=&code=`; `/upload` (error JSON) |
 * | serve-hostname | `--port` (9376) | any path: the host name, no newline |
 * | liveness | 8080 | `/healthz`: 200 `ok` for the first 10 s after `ctx.startedAt`, then 500 `error: <seconds>`; `/started`: Go duration; `/redirect?loc=` 302; else 404 `404 page not found` |
 * | test-webserver | `--port` (80) | `http.FileServer` of the container's `/` with CORS headers; 404 `404 page not found` |
 * | porter | each `SERVE_PORT_N` | the variable's value (`--json-response`: `{"Method":"GET","Body":value}`) |
 * | nettest | `--port` (8080) | `/write` (POST `{"Source":...}`) counts contacts, `/read` the state as json.MarshalIndent, `/status` `running`, `/quit` |
 *
 * `seedImageFiles(image, fs)` creates nginx's `index.html` (the 612-byte "Welcome to nginx!") and `50x.html`,
 * httpd's `htdocs/index.html` (`<html><body><h1>It works!</h1></body></html>`),
 * and ELF stubs for `/agnhost`, `/pause`, `/usr/sbin/nginx`, `/usr/local/bin/httpd-foreground`, ... (so `ls` sees them; the shell hands them to `knownPrograms`).
 * `imageFilesKey(image)` names what it creates (the same for every tag), so that the containers of one image share a file system template.
 *
 * Not simulated: agnhost UDP/SCTP/TCP servers (only HTTP), TLS, netexec `/upload`, `logs-generator`,
 * `fake-gitserver`, `webhook`, `guestbook`, `nettest`, `connect`, `port-forward-tester`; nginx/httpd configuration files
 * (the default site only), Range requests, conditional GETs; file owners (every file is 0:0);
 * perl programs; cobra's usage text after a flag error (only the `Error: ...` line).
 */
export { containerArgv, imageConfig, parseImage } from './entrypoint.js';
export type { ImageConfig, ImageRef } from './entrypoint.js';
export { knownPrograms, silentServer, parseFlags, programOf, nginxVersion, httpdVersion, AGNHOST_SUBCOMMANDS, MOUNTTEST_FLAGS } from './programs.js';
export type { KnownProgramsOptions, ParsedFlags } from './programs.js';
export { servedPorts, httpServer, seedImageFiles, imageFilesKey, nginxErrorPage, NGINX_INDEX_HTML, NGINX_50X_HTML, HTTPD_INDEX_HTML } from './servers.js';
export type { ServerRequest, ServerResponse, ServerContext, ServerHandler, FetchResult } from './servers.js';
export { goQuote, goFileMode, goJSONMap, goTimeNow, goDuration } from './go.js';
