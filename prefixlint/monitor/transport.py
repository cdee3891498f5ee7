"""httpx transports that watch OpenAI and Anthropic requests on their way through.

Use them as the SDKs' HTTP client (``httpx2`` for SDKs built on it, else ``httpx``)::

    client = OpenAI(http_client=httpx2.Client(transport=MonitorTransport(monitor)))
    client = AsyncAnthropic(
        http_client=httpx2.AsyncClient(transport=AsyncMonitorTransport(monitor))
    )

The request is passed on unchanged (the same ``httpx.Request`` object); the response body
streams through untouched while its usage is read: from the JSON body when it ends, or from
server-sent events as they pass. Bodies compressed with gzip or deflate are decompressed for
reading only; with other encodings the usage is not read. Observation never raises into the
caller: a body it cannot read is passed through unobserved.
"""

from __future__ import annotations

import functools
import importlib
import json
import logging
import zlib
from collections.abc import AsyncIterator, Callable, Iterator
from typing import TYPE_CHECKING, Protocol, cast

from prefixlint.monitor.fingerprint import request_format
from prefixlint.monitor.tracker import Monitor, Observation
from prefixlint.monitor.usage import StreamUsage, usage_from_body

if TYPE_CHECKING:
    import httpx

LOGGER = logging.getLogger("prefixlint.monitor")
MAX_BODY_BYTES = 16 * 1024 * 1024
"""Larger JSON response bodies are not kept for reading usage."""


class HTTPModule(Protocol):
    """What is used of the ``httpx``-like module (``httpx`` or ``httpx2``, which keeps its API;
    typed with httpx's classes)."""

    def __hash__(self) -> int: ...
    @property
    def RequestNotRead(self) -> type[Exception]: ...
    @property
    def Response(self) -> type[httpx.Response]: ...
    @property
    def HTTPTransport(self) -> type[httpx.HTTPTransport]: ...
    @property
    def AsyncHTTPTransport(self) -> type[httpx.AsyncHTTPTransport]: ...
    @property
    def BaseTransport(self) -> type[httpx.BaseTransport]: ...
    @property
    def AsyncBaseTransport(self) -> type[httpx.AsyncBaseTransport]: ...
    @property
    def SyncByteStream(self) -> type[httpx.SyncByteStream]: ...
    @property
    def AsyncByteStream(self) -> type[httpx.AsyncByteStream]: ...


class _Decompressor(Protocol):
    def decompress(self, data: bytes, /) -> bytes: ...


def _decompressor(encoding: str) -> _Decompressor | None:
    encoding = encoding.strip().lower()
    if encoding in ("", "identity"):
        return None
    if encoding in ("gzip", "deflate", "x-gzip"):
        return zlib.decompressobj(wbits=47)  # 32 + 15: gzip or zlib header, detected
    raise ValueError(encoding)


class _UsageReader:
    """Collects what is needed to read usage from a response body passing through."""

    def __init__(
        self, monitor: Monitor, observation: Observation, response: httpx.Response
    ) -> None:
        self.monitor = monitor
        self.observation = observation
        self.finished = False
        self.ok = 200 <= response.status_code < 300
        self.stream = "text/event-stream" in response.headers.get("content-type", "")
        self.decompress: _Decompressor | None = None
        try:
            self.decompress = _decompressor(response.headers.get("content-encoding", ""))
        except ValueError:
            self.ok = False
        self.events = StreamUsage(observation.record.print.format) if self.stream else None
        self.body = bytearray()

    def feed(self, chunk: bytes) -> None:
        """Read one chunk of the body as it passes."""
        if not self.ok:
            return
        try:
            data = self.decompress.decompress(chunk) if self.decompress else chunk
        except zlib.error:
            self.ok = False
            return
        if self.events is not None:
            self.events.feed(data)
        elif len(self.body) + len(data) <= MAX_BODY_BYTES:
            self.body += data
        else:
            self.ok = False

    def finish(self) -> None:
        """Read the usage of the whole body and report it (once)."""
        if self.finished:
            return
        self.finished = True
        usage = None
        if self.ok:
            fmt = self.observation.record.print.format
            usage = self.events.usage() if self.events else usage_from_body(bytes(self.body), fmt)
        self.body = bytearray()
        try:
            self.monitor.observe_response(self.observation, usage)
        except Exception:  # observation must never break the caller's request
            LOGGER.debug("prefixlint monitor: response not observed", exc_info=True)


def _observe(
    monitor: Monitor, request: httpx.Request, route: str | None, http: HTTPModule
) -> Observation | None:
    """The observation of a watched request, or ``None`` (other endpoints, unreadable body)."""
    fmt = request_format(request.url.path)
    if fmt is None or request.method != "POST":
        return None
    try:
        body = json.loads(request.content)
    except (http.RequestNotRead, ValueError, UnicodeDecodeError):
        return None
    if not isinstance(body, dict):
        return None
    try:
        return monitor.observe_request(body, fmt, monitor.current_route(route))
    except Exception:  # observation must never break the caller's request
        LOGGER.debug("prefixlint monitor: request not observed", exc_info=True)
        return None


def default_http() -> HTTPModule:
    """``httpx2`` where installed (the OpenAI and Anthropic SDKs moved to it), else ``httpx``."""
    try:
        import httpx2
    except ImportError:
        import httpx

        return httpx
    return cast(HTTPModule, httpx2)  # httpx2 keeps httpx's API


def _http_of(
    transport: httpx.BaseTransport | httpx.AsyncBaseTransport | None, http: HTTPModule | None
) -> HTTPModule:
    """``http``, else the module ``transport`` comes from, else :func:`default_http`."""
    if http is not None:
        return http
    if transport is not None:
        package = type(transport).__module__.partition(".")[0]
        return cast(HTTPModule, importlib.import_module(package))
    return default_http()


class MonitorTransport:
    """An httpx transport that wraps ``transport`` and reports to ``monitor``.

    The instance subclasses the ``BaseTransport`` of ``http`` (the ``httpx`` or ``httpx2``
    module): given, else that of ``transport``, else :func:`default_http`; the default inner
    transport is that module's ``HTTPTransport()``. ``route`` names every request's route
    unless ``Monitor.route(...)`` names it; without either the route is the calling function.
    """

    # The module's byte stream class with :class:`_ObservedStream` mixed in (see _flavour).
    _stream_class: Callable[[httpx.SyncByteStream, _UsageReader], httpx.SyncByteStream]

    def __new__(
        cls,
        monitor: Monitor,
        transport: httpx.BaseTransport | None = None,
        *,
        route: str | None = None,
        http: HTTPModule | None = None,
    ) -> MonitorTransport:
        if cls is MonitorTransport:
            cls = _flavour(_http_of(transport, http))[0]
        return object.__new__(cls)

    def __init__(
        self,
        monitor: Monitor,
        transport: httpx.BaseTransport | None = None,
        *,
        route: str | None = None,
        http: HTTPModule | None = None,
    ) -> None:
        self.monitor = monitor
        self.http = _http_of(transport, http)
        self.inner = transport or self.http.HTTPTransport()
        self.route = route

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """Pass ``request`` on and watch its response's body go by."""
        observation = _observe(self.monitor, request, self.route, self.http)
        try:
            response = self.inner.handle_request(request)
        except BaseException:
            if observation is not None:
                self.monitor.observe_response(observation, None)
            raise
        if observation is None:
            return response
        reader = _UsageReader(self.monitor, observation, response)
        # A synchronous transport's response streams synchronously.
        stream = cast("httpx.SyncByteStream", response.stream)
        return _observed(self.http, response, self._stream_class(stream, reader))

    def close(self) -> None:
        """Close the inner transport."""
        self.inner.close()


class AsyncMonitorTransport:
    """The asynchronous :class:`MonitorTransport` (``AsyncHTTPTransport`` by default)."""

    # The module's byte stream class with :class:`_AsyncObservedStream` mixed in.
    _stream_class: Callable[[httpx.AsyncByteStream, _UsageReader], httpx.AsyncByteStream]

    def __new__(
        cls,
        monitor: Monitor,
        transport: httpx.AsyncBaseTransport | None = None,
        *,
        route: str | None = None,
        http: HTTPModule | None = None,
    ) -> AsyncMonitorTransport:
        if cls is AsyncMonitorTransport:
            cls = _flavour(_http_of(transport, http))[1]
        return object.__new__(cls)

    def __init__(
        self,
        monitor: Monitor,
        transport: httpx.AsyncBaseTransport | None = None,
        *,
        route: str | None = None,
        http: HTTPModule | None = None,
    ) -> None:
        self.monitor = monitor
        self.http = _http_of(transport, http)
        self.inner = transport or self.http.AsyncHTTPTransport()
        self.route = route

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Pass ``request`` on and watch its response's body go by."""
        observation = _observe(self.monitor, request, self.route, self.http)
        try:
            response = await self.inner.handle_async_request(request)
        except BaseException:
            if observation is not None:
                self.monitor.observe_response(observation, None)
            raise
        if observation is None:
            return response
        reader = _UsageReader(self.monitor, observation, response)
        # An asynchronous transport's response streams asynchronously.
        stream = cast("httpx.AsyncByteStream", response.stream)
        return _observed(self.http, response, self._stream_class(stream, reader))

    async def aclose(self) -> None:
        """Close the inner transport."""
        await self.inner.aclose()


def _observed(
    http: HTTPModule,
    response: httpx.Response,
    stream: httpx.SyncByteStream | httpx.AsyncByteStream,
) -> httpx.Response:
    """``response`` with its body read through ``stream``."""
    return http.Response(
        status_code=response.status_code,
        headers=response.headers,
        stream=stream,
        extensions=response.extensions,
    )


class _ObservedStream:
    """A response body passing through a :class:`_UsageReader`."""

    def __init__(self, inner: httpx.SyncByteStream, reader: _UsageReader) -> None:
        self.inner = inner
        self.reader = reader

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self.inner:
            self.reader.feed(chunk)
            yield chunk

    def close(self) -> None:
        try:
            self.inner.close()
        finally:
            self.reader.finish()


class _AsyncObservedStream:
    """An asynchronous response body passing through a :class:`_UsageReader`."""

    def __init__(self, inner: httpx.AsyncByteStream, reader: _UsageReader) -> None:
        self.inner = inner
        self.reader = reader

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self.inner:
            self.reader.feed(chunk)
            yield chunk

    async def aclose(self) -> None:
        try:
            await self.inner.aclose()
        finally:
            self.reader.finish()


@functools.cache
def _flavour(http: HTTPModule) -> tuple[type[MonitorTransport], type[AsyncMonitorTransport]]:
    """The sync and async transport classes for the ``httpx``-like module ``http``: each
    subclasses its base transport, and its stream class the module's byte stream."""
    sync_stream = type("ObservedStream", (_ObservedStream, http.SyncByteStream), {})
    async_stream = type("AsyncObservedStream", (_AsyncObservedStream, http.AsyncByteStream), {})
    sync = type(
        "MonitorTransport",
        (MonitorTransport, http.BaseTransport),
        {"_stream_class": sync_stream, "__module__": __name__},
    )
    asynchronous = type(
        "AsyncMonitorTransport",
        (AsyncMonitorTransport, http.AsyncBaseTransport),
        {"_stream_class": async_stream, "__module__": __name__},
    )
    return sync, asynchronous
