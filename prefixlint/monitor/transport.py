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

from prefixlint.monitor.fingerprint import request_format
from prefixlint.monitor.tracker import Monitor, Observation
from prefixlint.monitor.usage import StreamUsage, usage_from_body

LOGGER = logging.getLogger("prefixlint.monitor")
MAX_BODY_BYTES = 16 * 1024 * 1024
"""Larger JSON response bodies are not kept for reading usage."""


def _decompressor(encoding: str):
    encoding = encoding.strip().lower()
    if encoding in ("", "identity"):
        return None
    if encoding in ("gzip", "deflate", "x-gzip"):
        return zlib.decompressobj(wbits=47)  # 32 + 15: gzip or zlib header, detected
    raise ValueError(encoding)


class _UsageReader:
    """Collects what is needed to read usage from a response body passing through."""

    def __init__(self, monitor: Monitor, observation: Observation, response):
        self.monitor = monitor
        self.observation = observation
        self.finished = False
        self.ok = 200 <= response.status_code < 300
        self.stream = "text/event-stream" in response.headers.get("content-type", "")
        try:
            self.decompress = _decompressor(response.headers.get("content-encoding", ""))
        except ValueError:
            self.ok = False
        self.events = StreamUsage(observation.record.print.format) if self.stream else None
        self.body = bytearray()

    def feed(self, chunk: bytes) -> None:
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


def _observe(monitor: Monitor, request, route: str | None, http) -> Observation | None:
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


def default_http():
    """``httpx2`` where installed (the OpenAI and Anthropic SDKs moved to it), else ``httpx``."""
    try:
        import httpx2
    except ImportError:
        import httpx as httpx2
    return httpx2


def _http_of(transport, http):
    if http is not None:
        return http
    if transport is not None:
        return importlib.import_module(type(transport).__module__.partition(".")[0])
    return default_http()


class MonitorTransport:
    """An httpx transport that wraps ``transport`` and reports to ``monitor``.

    The instance subclasses the ``BaseTransport`` of ``http`` (the ``httpx`` or ``httpx2``
    module): given, else that of ``transport``, else :func:`default_http`; the default inner
    transport is that module's ``HTTPTransport()``. ``route`` names every request's route
    unless ``Monitor.route(...)`` names it; without either the route is the calling function.
    """

    def __new__(cls, monitor, transport=None, *, route=None, http=None):
        if cls in (MonitorTransport, AsyncMonitorTransport):
            flavour = _flavour(_http_of(transport, http))
            cls = flavour[0] if cls is MonitorTransport else flavour[1]
        return object.__new__(cls)

    def __init__(self, monitor: Monitor, transport=None, *, route: str | None = None, http=None):
        self.monitor = monitor
        self.http = _http_of(transport, http)
        self.inner = transport or self._default_inner()
        self.route = route

    def _default_inner(self):
        return self.http.HTTPTransport()

    def handle_request(self, request):
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
        return self._observed(response, self._stream_class(response.stream, reader))

    def _observed(self, response, stream):
        return self.http.Response(
            status_code=response.status_code,
            headers=response.headers,
            stream=stream,
            extensions=response.extensions,
        )

    def close(self) -> None:
        self.inner.close()


class AsyncMonitorTransport(MonitorTransport):
    """The asynchronous :class:`MonitorTransport` (``AsyncHTTPTransport`` by default)."""

    def _default_inner(self):
        return self.http.AsyncHTTPTransport()

    async def handle_async_request(self, request):
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
        return self._observed(response, self._stream_class(response.stream, reader))

    async def aclose(self) -> None:
        await self.inner.aclose()


@functools.cache
def _flavour(http) -> tuple[type, type]:
    """The sync and async transport classes for the ``httpx``-like module ``http``."""

    class ObservedStream(http.SyncByteStream):
        def __init__(self, inner, reader: _UsageReader) -> None:
            self.inner = inner
            self.reader = reader

        def __iter__(self):
            for chunk in self.inner:
                self.reader.feed(chunk)
                yield chunk

        def close(self) -> None:
            try:
                self.inner.close()
            finally:
                self.reader.finish()

    class AsyncObservedStream(http.AsyncByteStream):
        def __init__(self, inner, reader: _UsageReader) -> None:
            self.inner = inner
            self.reader = reader

        async def __aiter__(self):
            async for chunk in self.inner:
                self.reader.feed(chunk)
                yield chunk

        async def aclose(self) -> None:
            try:
                await self.inner.aclose()
            finally:
                self.reader.finish()

    sync = type(
        "MonitorTransport",
        (MonitorTransport, http.BaseTransport),
        {"_stream_class": ObservedStream, "__module__": __name__},
    )
    asynchronous = type(
        "AsyncMonitorTransport",
        (AsyncMonitorTransport, http.AsyncBaseTransport),
        {"_stream_class": AsyncObservedStream, "__module__": __name__},
    )
    return sync, asynchronous
