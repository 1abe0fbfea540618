"""One HTTP request to a server that is not trusted, bounded in time and in size.

A served model's replies come from a program chronoprobe does not control, which may be slow,
broken or hostile. :class:`Client` sends each request and reads its reply under three rules:

- **one deadline for the whole exchange.** Connecting, the TLS handshake, a proxy's tunnel,
  sending, the status line, the headers and the body all wait at most until the request's
  deadline: every read of the socket waits only for the time left. (A timeout per read, as
  most clients have, never trips on a server that sends one byte a second.) Only the name
  lookup is the system's;
- **a cap on the reply.** A body longer than ``max_bytes`` (announced or read) stops the
  exchange; http.client's own limits hold the status line and the headers (64 KiB a line, 100
  headers);
- **no redirect is followed,** and nothing is decompressed (none is asked for): a reply is
  handed back as the server sent it, for the caller to judge.

Each thread keeps one connection alive between its requests; proxies are taken from the
environment (``HTTPS_PROXY``, ``HTTP_PROXY``, ``NO_PROXY``), as other clients take them.
"""

from __future__ import annotations

import base64
import http.client
import io
import os
import socket
import ssl
import threading
import time
import urllib.request
from dataclasses import dataclass
from urllib.parse import SplitResult, unquote, urlsplit


class ExchangeError(Exception):
    """An exchange that gave no reply; the message says why, in a few words."""


class Unreachable(ExchangeError):
    """Nothing answers at the address (refused, no such host, a TLS or proxy refusal)."""


class TimedOut(ExchangeError):
    """The deadline passed before the whole reply had arrived."""


class Broken(ExchangeError):
    """The connection broke, or what came back is no HTTP reply."""


class TooLarge(ExchangeError):
    """The reply's body is longer than the cap."""


class _Stale(Broken):
    """A connection that broke before any reply came: on a kept-alive one, the server closed
    it while idle, and the request is sent again on a new one."""


@dataclass(frozen=True)
class Reply:
    status: int
    reason: str
    headers: dict[str, str]  # names in lower case; a repeated header keeps its first value
    body: bytes


class _Deadline:
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.end = time.monotonic() + seconds

    def left(self) -> float:
        """Seconds left; :class:`TimedOut` once none are."""
        left = self.end - time.monotonic()
        if left <= 0:
            raise TimedOut(f"no whole reply within {self.seconds:g} s")
        return left


class _Reader(io.RawIOBase):
    """Reads of a socket that each wait only for the time left to the connection's deadline."""

    def __init__(self, bound: _BoundSocket) -> None:
        self.bound = bound

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        self.bound.raw.settimeout(self.bound.owner.deadline.left())
        return self.bound.raw.recv_into(buffer)

    def close(self) -> None:
        if not self.closed:
            self.bound.reader_closed()
        super().close()


class _BoundSocket:
    """What http.client uses of a socket (``makefile``, ``sendall``, ``close``), bound to the
    deadline of the request in flight on its connection. Like a socket, it stays open while a
    reader made from it is: http.client closes the connection of a reply that ends the
    connection before the reply's body is read."""

    def __init__(self, raw: socket.socket, owner: _Connection) -> None:
        self.raw, self.owner = raw, owner
        self.readers, self.closing = 0, False

    def makefile(self, mode: str = "rb", *args, **kwargs) -> io.BufferedReader:
        self.readers += 1
        return io.BufferedReader(_Reader(self))

    def reader_closed(self) -> None:
        self.readers -= 1
        if self.closing and self.readers <= 0:
            self.raw.close()

    def sendall(self, data) -> None:
        self.raw.settimeout(self.owner.deadline.left())  # sendall's timeout is its total
        self.raw.sendall(data)

    def settimeout(self, value) -> None:  # http.client sets none of its own once connected
        pass

    def close(self) -> None:
        self.closing = True
        if self.readers <= 0:
            self.raw.close()


class _Connection(http.client.HTTPConnection):
    """A connection to ``target`` (through ``proxy``) whose every wait ends at ``deadline``,
    which the caller sets before each request."""

    def __init__(
        self, target: SplitResult, proxy: SplitResult | None, context: ssl.SSLContext | None
    ) -> None:
        via = proxy or target
        super().__init__(via.hostname, via.port or _default_port(via.scheme))
        self.target, self.proxy, self.context = target, proxy, context
        self.deadline = _Deadline(0)

    def connect(self) -> None:
        raw = socket.create_connection((self.host, self.port), timeout=self.deadline.left())
        try:
            raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if self.target.scheme == "https":
                if self.proxy is not None:
                    self._tunnel_through(raw)
                raw.settimeout(self.deadline.left())
                raw = self.context.wrap_socket(raw, server_hostname=self.target.hostname)
        except BaseException:
            raw.close()
            raise
        self.sock = _BoundSocket(raw, self)

    def _tunnel_through(self, raw: socket.socket) -> None:
        """A CONNECT tunnel to the target through the proxy, under the same deadline."""
        where = f"{self.target.hostname}:{self.target.port or 443}"
        lines = [f"CONNECT {where} HTTP/1.1", f"Host: {where}", *_proxy_auth(self.proxy), "", ""]
        bound = _BoundSocket(raw, self)
        bound.sendall("\r\n".join(lines).encode("ascii"))
        answer = http.client.HTTPResponse(bound, method="CONNECT")  # type: ignore[arg-type]
        answer.begin()
        if answer.status != 200:
            raise Unreachable(
                f"the proxy {self.proxy.hostname} refused the tunnel ({answer.status} "
                f"{answer.reason})"
            )


def _default_port(scheme: str) -> int:
    return 443 if scheme == "https" else 80


def _proxy_auth(proxy: SplitResult | None) -> list[str]:
    if proxy is None or proxy.username is None:
        return []
    pair = f"{unquote(proxy.username)}:{unquote(proxy.password or '')}".encode()
    return [f"Proxy-Authorization: Basic {base64.b64encode(pair).decode('ascii')}"]


def _proxy_for(target: SplitResult) -> SplitResult | None:
    """The HTTP proxy the environment names for ``target``, or None (also for a host that
    ``NO_PROXY`` exempts, and for any proxy but an http:// one)."""
    proxies = urllib.request.getproxies()
    url = proxies.get(target.scheme) or proxies.get("all")
    if not url or urllib.request.proxy_bypass(target.hostname or ""):
        return None
    proxy = urlsplit(url if "://" in url else f"http://{url}")
    return proxy if proxy.scheme == "http" and proxy.hostname else None


def tls_context() -> ssl.SSLContext:
    """Certificates from ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` where set, else certifi's bundle
    where installed (as other Python clients), else the system's."""
    if os.environ.get("SSL_CERT_FILE") or os.environ.get("SSL_CERT_DIR"):
        return ssl.create_default_context()
    try:
        import certifi
    except ImportError:
        return ssl.create_default_context()
    return ssl.create_default_context(cafile=certifi.where())


class Client:
    """POSTs to one server (``base_url``), each bounded by ``timeout`` seconds and a body of
    ``max_bytes``; thread-safe, one kept-alive connection per thread. A context manager that
    closes every connection on exit."""

    def __init__(
        self, base_url: str, headers: dict[str, str], timeout: float, max_bytes: int
    ) -> None:
        self.target = urlsplit(base_url)
        self.proxy = _proxy_for(self.target)
        self.context = tls_context() if self.target.scheme == "https" else None
        self.headers = {"Host": self.target.netloc, "Accept": "application/json", **headers}
        self.timeout, self.max_bytes = timeout, max_bytes
        self._local = threading.local()
        self._opened: list[_Connection] = []
        self._lock = threading.Lock()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        with self._lock:
            for connection in self._opened:
                connection.close()
            self._opened.clear()

    def post(self, path: str, body: bytes, content_type: str = "application/json") -> Reply:
        """The reply to one POST of ``body`` to ``base_url + path``; an :class:`ExchangeError`
        when none came back whole within the deadline and the cap."""
        deadline = _Deadline(self.timeout)
        url = self.target.path.rstrip("/") + path
        if self.proxy is not None and self.target.scheme == "http":
            url = f"http://{self.target.netloc}{url}"  # a plain proxy is asked the whole URL
        headers = {**self.headers, "Content-Type": content_type}
        connection = getattr(self._local, "connection", None)
        if connection is not None:
            try:
                return self._exchange(connection, deadline, url, body, headers)
            except _Stale:  # a kept-alive connection the server had closed meanwhile
                self._forget(connection)
            except ExchangeError:
                self._forget(connection)
                raise
        connection = self._open()
        try:
            return self._exchange(connection, deadline, url, body, headers)
        except ExchangeError as err:
            self._forget(connection)
            if isinstance(err, _Stale):
                raise Broken(str(err)) from None
            raise

    def _open(self) -> _Connection:
        connection = _Connection(self.target, self.proxy, self.context)
        with self._lock:
            self._opened.append(connection)
        self._local.connection = connection
        return connection

    def _forget(self, connection: _Connection) -> None:
        connection.close()
        with self._lock:
            if connection in self._opened:
                self._opened.remove(connection)
        if getattr(self._local, "connection", None) is connection:
            self._local.connection = None

    def _exchange(
        self, connection: _Connection, deadline: _Deadline, url: str, body: bytes, headers
    ) -> Reply:
        connection.deadline = deadline
        stage = "connect"  # then "ask", then "read" once the status line came
        try:
            if connection.sock is None:
                connection.connect()
            stage = "ask"
            connection.request("POST", url, body, headers)
            response = connection.getresponse()
            stage = "read"
            reply = self._read(response)
        except ExchangeError:
            raise
        except TimeoutError:  # socket.timeout is TimeoutError
            raise TimedOut(f"no whole reply within {self.timeout:g} s") from None
        except ssl.SSLCertVerificationError as err:
            reason = f"its TLS certificate is not trusted ({err.verify_message})"
            raise Unreachable(reason) from None
        except (ConnectionRefusedError, socket.gaierror) as err:
            raise Unreachable(str(err)) from None
        except (http.client.HTTPException, OSError) as err:
            if stage == "connect" and not isinstance(err, http.client.HTTPException):
                raise Unreachable(str(err) or type(err).__name__) from None
            # no byte of a reply came: a request sent again is not one answered twice
            stale = stage == "ask" and isinstance(err, ConnectionError)
            raise (_Stale if stale else Broken)(_broken(err)) from None
        if response.will_close or not response.isclosed():
            self._forget(connection)
        return reply

    def _read(self, response: http.client.HTTPResponse) -> Reply:
        headers: dict[str, str] = {}
        for name, value in response.getheaders():
            headers.setdefault(name.lower(), value)
        announced = headers.get("content-length", "").strip()
        digits = announced.isascii() and announced.isdigit()
        if digits and (len(announced) > 18 or int(announced) > self.max_bytes):
            raise TooLarge(f"it announced a body of {announced[:20]} bytes")
        body = response.read(self.max_bytes + 1)  # to the end, or one byte past the cap
        if len(body) > self.max_bytes:
            raise TooLarge(f"its body ran past {self.max_bytes:,} bytes")
        if response.length:  # what the server announced and did not send
            whole = len(body) + response.length
            raise Broken(f"the reply ended early ({len(body):,} bytes of the {whole:,} announced)")
        return Reply(response.status, response.reason or "", headers, body)


def _broken(err: BaseException) -> str:
    if isinstance(err, http.client.IncompleteRead):
        return f"the reply ended early ({len(err.partial):,} bytes of the body)"
    if isinstance(err, http.client.RemoteDisconnected):
        return "the server closed the connection without a reply"
    if isinstance(err, http.client.LineTooLong):
        return f"no HTTP reply: {err}"
    if isinstance(err, http.client.BadStatusLine):
        return "no HTTP reply (its first line is no status line)"
    if isinstance(err, http.client.HTTPException):
        return f"no HTTP reply ({type(err).__name__}: {err})"
    return str(err) or type(err).__name__
