"""HTTPS for `erudit serve --https`: TLS ends here, and the bytes go on to the same waitress
server a plain `erudit serve` runs, listening on 127.0.0.1 only.

Waitress speaks no TLS. The WSGI servers that do (cheroot, CherryPy's) shake hands in the one
thread that accepts connections, so a phone that connects and says nothing keeps every other
out for the whole timeout, and they read each request in a thread of its own. Here asyncio
(the standard library's ssl underneath) shakes hands with every connection at once, and
waitress behind keeps all it does: stalled connections hold no thread and are closed, bodies
are bounded, threads and connections are counted. This side only passes bytes along, with a
timeout for the handshake and a bound on connections of its own.

A browser that asks the https port in plain http is sent to the same address over https.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import socket
import ssl
import threading

CHUNK = 64 * 1024
TLS_HANDSHAKE = 0x16          # the first byte a TLS client sends
HEAD_LIMIT = 8192             # bytes of a plain-http request read to send it to https
_HOST = re.compile(rb"^host:[ \t]*([A-Za-z0-9.\-:\[\]]{1,255})[ \t]*\r?$", re.I | re.M)
_TARGET = re.compile(rb"^[A-Z]{3,10} (/[!-~]{0,2000}) HTTP/1\.[01]\r?$", re.M)


class TlsFront:
    """Listens on host:port (0: any free port, see `effective_port`), speaks TLS with
    `context`, and passes each connection's bytes to 127.0.0.1:`upstream`."""

    def __init__(self, host: str, port: int, upstream: int, context: ssl.SSLContext,
                 timeout: float, limit: int):
        self.upstream, self.context, self.timeout, self.limit = upstream, context, timeout, limit
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                    flags=socket.AI_PASSIVE)[0][0]
        self._listener = socket.create_server((host, port), family=family, backlog=128)
        self._listener.setblocking(False)
        self.effective_port = self._listener.getsockname()[1]
        self._loop = asyncio.SelectorEventLoop()   # add_reader on every platform
        self._loop.set_exception_handler(_quiet)
        self._thread = threading.Thread(target=self._run, name="erudit-tls", daemon=True)
        self._main: asyncio.Task | None = None
        self._open: set[asyncio.Task] = set()

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        """Stop listening and drop every connection (the server behind is stopping)."""
        if not self._thread.is_alive():
            self._listener.close()
            return
        self._loop.call_soon_threadsafe(self._stop)
        self._thread.join(10)

    def _run(self) -> None:
        self._main = self._loop.create_task(self._accept())
        with contextlib.suppress(asyncio.CancelledError):
            self._loop.run_until_complete(self._main)
        self._loop.close()

    def _stop(self) -> None:
        if self._main:
            self._main.cancel()

    async def _accept(self) -> None:
        try:
            while True:
                sock, _ = await self._loop.sock_accept(self._listener)
                if len(self._open) >= self.limit:
                    sock.close()
                    continue
                # small writes go out at once (asyncio sets this only where it knows the
                # socket's protocol, which an accepted one does not say)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                task = self._loop.create_task(self._connection(sock))
                self._open.add(task)
                task.add_done_callback(self._open.discard)
        finally:
            self._listener.close()
            for task in list(self._open):
                task.cancel()
            await asyncio.gather(*self._open, return_exceptions=True)

    async def _connection(self, sock: socket.socket) -> None:
        try:
            first = await self._first_byte(sock)
            if first == bytes([TLS_HANDSHAKE]):
                await self._relay(sock)
            elif first:
                await self._to_https(sock)
        except (OSError, EOFError):   # TimeoutError is an OSError
            pass            # the phone went away, stalled, or would not take the certificate
        finally:
            sock.close()

    async def _first_byte(self, sock: socket.socket) -> bytes:
        """The connection's first byte, left unread; b'' when it closes first."""
        ready = self._loop.create_future()
        self._loop.add_reader(sock.fileno(), lambda: ready.done() or ready.set_result(None))
        try:
            await asyncio.wait_for(ready, self.timeout)
        finally:
            self._loop.remove_reader(sock.fileno())
        return sock.recv(1, socket.MSG_PEEK)

    async def _relay(self, sock: socket.socket) -> None:
        """TLS with the phone, plain bytes with the server behind, both ways until either
        side closes; when the server stops, the connection is dropped at once."""
        phone_in, phone_out = await self._streams(sock)
        server_out = None
        try:
            server_in, server_out = await asyncio.open_connection("127.0.0.1", self.upstream)
            ways = [self._loop.create_task(_pipe(phone_in, server_out)),
                    self._loop.create_task(_pipe(server_in, phone_out))]
            try:
                await asyncio.wait(ways, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for way in ways:
                    way.cancel()
            server_out.close()
            phone_out.close()           # what is written still goes out, then the close
            await asyncio.wait_for(phone_out.wait_closed(), self.timeout)
        finally:
            for writer in (server_out, phone_out):
                if writer:
                    writer.transport.abort()    # nothing once closed

    async def _streams(self, sock: socket.socket):
        """The phone's side as streams, once the TLS handshake is done."""
        reader = asyncio.StreamReader(limit=CHUNK)
        protocol = asyncio.StreamReaderProtocol(reader)
        transport, _ = await self._loop.connect_accepted_socket(
            lambda: protocol, sock.dup(), ssl=self.context,
            ssl_handshake_timeout=self.timeout)
        return reader, asyncio.StreamWriter(transport, protocol, reader, self._loop)

    async def _to_https(self, sock: socket.socket) -> None:
        """A plain-http request: a redirect to the same address over https, and the close."""
        head = b""
        while b"\r\n\r\n" not in head and len(head) < HEAD_LIMIT:
            data = await asyncio.wait_for(self._loop.sock_recv(sock, HEAD_LIMIT), self.timeout)
            if not data:
                break
            head += data
        answer = https_redirect(head)
        await asyncio.wait_for(self._loop.sock_sendall(sock, answer), self.timeout)


def https_redirect(head: bytes) -> bytes:
    """The answer to a plain-http request head sent to the https port: 307 to the same host
    and path over https, or 400 with a line saying to use https."""
    host, target = _HOST.search(head), _TARGET.search(head)
    if host and target:
        where = f"https://{host[1].decode()}{target[1].decode()}"
        status, headers = "307 Temporary Redirect", f"Location: {where}\r\n"
        text = f"This server speaks https: {where}\n"
    else:
        status, headers, text = "400 Bad Request", "", "This server speaks https only.\n"
    body = text.encode()
    return (f"HTTP/1.1 {status}\r\n{headers}Content-Type: text/plain; charset=utf-8\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode() + body


async def _pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    with contextlib.suppress(OSError):
        while data := await source.read(CHUNK):
            sink.write(data)
            await sink.drain()


def _quiet(loop: asyncio.AbstractEventLoop, context: dict) -> None:
    """Connections failing (reset, a refused certificate, a plain-http client) are the
    network's business, not the terminal's; anything else is said as asyncio says it."""
    if isinstance(context.get("exception"), OSError):
        logging.getLogger(__name__).debug("%s", context.get("message"))
        return
    loop.default_exception_handler(context)


class Behind:
    """A server (waitress) behind a TlsFront, as one: `.run()` serves until `.close()`."""

    def __init__(self, server, front: TlsFront):
        self.server, self.front = server, front
        self.effective_port = front.effective_port

    def run(self) -> None:
        self.front.start()
        self.server.run()

    def close(self) -> None:
        self.front.close()
        self.server.close()
