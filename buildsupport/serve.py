"""The development server of dist/ (`build.py serve`, and the browser tests and benchmarks): what a
good static host does. Right MIME types (application/wasm), the precompressed copy the browser
accepts (zstd, gzip), immutable caching for hashed and versioned folders, no-cache for pages, and
optionally a Content-Security-Policy header on every response."""

from __future__ import annotations

import mimetypes
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

from .common import DEFAULT_DIST

MIME = {
    ".wasm": "application/wasm",
    ".js": "text/javascript",
    ".mjs": "text/javascript",
    ".json": "application/json",
    ".css": "text/css",
    ".html": "text/html; charset=utf-8",
    ".svg": "image/svg+xml",
    ".whl": "application/octet-stream",
    ".zip": "application/zip",
    ".map": "application/json",
    ".txt": "text/plain; charset=utf-8",
    ".png": "image/png",
    ".woff2": "font/woff2",
    ".woff": "font/woff",
    ".ttf": "font/ttf",
    ".ico": "image/x-icon",
}
IMMUTABLE = ("assets/", "packages/", "pyodide/", "panel/")
ENCODINGS = (("zstd", ".zst"), ("gzip", ".gz"))


class DistHandler(BaseHTTPRequestHandler):
    """Serves files under `root`; `csp`, `immutable` and `on_response` are set per server."""

    protocol_version = "HTTP/1.1"
    root: Path
    csp: str | None = None
    immutable: tuple[str, ...] = IMMUTABLE
    on_response = None

    def log_message(self, fmt, *args):  # quiet
        pass

    def do_HEAD(self):
        self.do_GET(head=True)

    def do_GET(self, head=False):
        target = self.target()
        if target is None:
            return self.send_body(self.requested(), 404, b"not found\n", {"Content-Type": "text/plain"}, head)
        rel = target.relative_to(self.root).as_posix()
        encoding, body = self.encoded(target)
        st = body.stat()
        etag = f'"{int(st.st_mtime_ns):x}-{st.st_size:x}{"-" + encoding if encoding else ""}"'
        cache = "public, max-age=31536000, immutable" if rel.startswith(self.immutable) else "no-cache"
        if self.headers.get("If-None-Match") == etag:
            return self.send_body(rel, 304, b"", {"ETag": etag, "Cache-Control": cache}, head=True)
        headers = {
            "Content-Type": MIME.get(target.suffix)
            or mimetypes.guess_type(target.name)[0]
            or "application/octet-stream",
            "Cache-Control": cache,
            "ETag": etag,
            "Vary": "Accept-Encoding",
            "X-Content-Type-Options": "nosniff",
        }
        if encoding:
            headers["Content-Encoding"] = encoding
        if self.csp:  # on every response, as hosts with a global header do (the worker gets it too)
            headers["Content-Security-Policy"] = self.csp
        self.send_body(rel, 200, body.read_bytes(), headers, head)

    def requested(self) -> str:
        """The path asked for, relative to root (a folder means its index.html)."""
        path = unquote(urlsplit(self.path).path).lstrip("/")
        return path + "index.html" if path.endswith("/") or not path else path

    def target(self) -> Path | None:
        """The file a request names, if it is one under root (and not a compressed copy)."""
        target = (self.root / self.requested()).resolve()
        inside = self.root in target.parents
        return target if inside and target.is_file() and target.suffix not in (".gz", ".zst") else None

    def encoded(self, target: Path) -> tuple[str | None, Path]:
        """The smallest copy the browser accepts: (Content-Encoding or None, file to send)."""
        accepted = {e.split(";")[0].strip() for e in self.headers.get("Accept-Encoding", "").split(",")}
        for encoding, ext in ENCODINGS:
            candidate = target.with_name(target.name + ext)
            if encoding in accepted and candidate.is_file():
                return encoding, candidate
        return None, target

    def send_body(self, rel: str, status: int, data: bytes, headers: dict, head: bool) -> None:
        if self.on_response:
            self.on_response(rel, status, len(data))
        self.send_response(status)
        for name, value in {**headers, "Content-Length": str(len(data))}.items():
            self.send_header(name, value)
        self.end_headers()
        if not head:
            try:
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass


class DistServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request, client_address):
        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


def make_server(
    dist: Path = DEFAULT_DIST,
    port: int = 0,
    csp: str | None = None,
    host: str = "127.0.0.1",
    on_response=None,
    immutable=IMMUTABLE,
) -> DistServer:
    """A threaded HTTP server for dist/ (not started); server.url is its address.
    on_response(path, status, body_bytes) is called for every response (benchmarks count bytes)."""
    handler = type(
        "Handler",
        (DistHandler,),
        {
            "root": Path(dist).resolve(),
            "csp": csp,
            "immutable": immutable,
            "on_response": staticmethod(on_response) if on_response else None,
        },
    )
    server = DistServer((host, port), handler)
    server.url = f"http://{host}:{server.server_address[1]}/"
    return server


def serve_in_thread(dist: Path = DEFAULT_DIST, port: int = 0, csp: str | None = None, **kw) -> DistServer:
    """make_server, serving from a daemon thread; stop it with server.shutdown() and server_close()."""
    server = make_server(dist, port, csp, **kw)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def serve_until_stopped(dist: Path, port: int, csp: str | None, open_browser: bool) -> int:
    """`build.py serve`: serve dist/ until Ctrl+C, opening the browser unless told not to; 1 if the
    port cannot be had."""
    try:
        server = make_server(dist, port, csp)
    except OSError as e:
        print(f"cannot serve on 127.0.0.1:{port} ({e.strerror}); try --port 0 (any free port)", file=sys.stderr)
        return 1
    print(f"serving {dist} at {server.url}  (Ctrl+C to stop){'  with CSP: ' + csp if csp else ''}", flush=True)
    if open_browser:
        import webbrowser

        threading.Timer(0.5, webbrowser.open, [server.url]).start()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0
