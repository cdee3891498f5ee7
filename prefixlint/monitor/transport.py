"""httpx transports that watch OpenAI and Anthropic requests on their way through.

Use them as the SDKs' HTTP client::

    client = OpenAI(http_client=httpx.Client(transport=MonitorTransport(monitor)))
    client = AsyncAnthropic(http_client=httpx.AsyncClient(transport=AsyncMonitorTransport(monitor)))

The request is passed on unchanged (the same ``httpx.Request`` object); the response body
streams through untouched while its usage is read: from the JSON body when it ends, or from
server-sent events as they pass. Bodies compressed with gzip or deflate are decompressed for
reading only; with other encodings the usage is not read. Observation never raises into the
caller: a body it cannot read is passed through unobserved.
"""

from __future__ import annotations

import json
import logging
import zlib

import httpx

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

    def __init__(self, monitor: Monitor, observation: Observation, response: httpx.Response):
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


class _ObservedStream(httpx.SyncByteStream):
    def __init__(self, inner: httpx.SyncByteStream, reader: _UsageReader) -> None:
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


class _AsyncObservedStream(httpx.AsyncByteStream):
    def __init__(self, inner: httpx.AsyncByteStream, reader: _UsageReader) -> None:
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


def _observe(monitor: Monitor, request: httpx.Request, route: str | None) -> Observation | None:
    """The observation of a watched request, or ``None`` (other endpoints, unreadable body)."""
    fmt = request_format(request.url.path)
    if fmt is None or request.method != "POST":
        return None
    try:
        body = json.loads(request.content)
    except (httpx.RequestNotRead, ValueError, UnicodeDecodeError):
        return None
    if not isinstance(body, dict):
        return None
    try:
        return monitor.observe_request(body, fmt, monitor.current_route(route))
    except Exception:  # observation must never break the caller's request
        LOGGER.debug("prefixlint monitor: request not observed", exc_info=True)
        return None


def _observed(response: httpx.Response, stream) -> httpx.Response:
    return httpx.Response(
        status_code=response.status_code,
        headers=response.headers,
        stream=stream,
        extensions=response.extensions,
        request=response.request,
    )


class MonitorTransport(httpx.BaseTransport):
    """Wraps ``transport`` (a default ``httpx.HTTPTransport``) and reports to ``monitor``.

    ``route`` names every request's route unless ``Monitor.route(...)`` names it; without
    either the route is the calling function (``module:function``).
    """

    def __init__(
        self,
        monitor: Monitor,
        transport: httpx.BaseTransport | None = None,
        *,
        route: str | None = None,
    ) -> None:
        self.monitor = monitor
        self.inner = transport or httpx.HTTPTransport()
        self.route = route

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        observation = _observe(self.monitor, request, self.route)
        try:
            response = self.inner.handle_request(request)
        except BaseException:
            if observation is not None:
                self.monitor.observe_response(observation, None)
            raise
        if observation is None:
            return response
        reader = _UsageReader(self.monitor, observation, response)
        return _observed(response, _ObservedStream(response.stream, reader))

    def close(self) -> None:
        self.inner.close()


class AsyncMonitorTransport(httpx.AsyncBaseTransport):
    """The asynchronous :class:`MonitorTransport`, wrapping an ``httpx.AsyncHTTPTransport``."""

    def __init__(
        self,
        monitor: Monitor,
        transport: httpx.AsyncBaseTransport | None = None,
        *,
        route: str | None = None,
    ) -> None:
        self.monitor = monitor
        self.inner = transport or httpx.AsyncHTTPTransport()
        self.route = route

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        observation = _observe(self.monitor, request, self.route)
        try:
            response = await self.inner.handle_async_request(request)
        except BaseException:
            if observation is not None:
                self.monitor.observe_response(observation, None)
            raise
        if observation is None:
            return response
        reader = _UsageReader(self.monitor, observation, response)
        return _observed(response, _AsyncObservedStream(response.stream, reader))

    async def aclose(self) -> None:
        await self.inner.aclose()
