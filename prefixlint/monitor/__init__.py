"""Runtime prefix-drift monitor for OpenAI and Anthropic clients.

::

    import httpx2, openai  # httpx for SDK versions built on httpx
    from prefixlint.monitor import Monitor, MonitorTransport, PrometheusMetrics

    monitor = Monitor(metrics=[PrometheusMetrics()])
    client = openai.OpenAI(http_client=httpx2.Client(transport=MonitorTransport(monitor)))
    with monitor.route("support-answer"):
        client.chat.completions.create(model="gpt-4o-mini", messages=[...])

Requests pass unchanged; only hashes of their components are kept (see
:mod:`prefixlint.monitor.fingerprint`). Warnings go to the ``prefixlint.monitor`` logger.
"""

from prefixlint.monitor.metrics import OpenTelemetryMetrics, PrometheusMetrics
from prefixlint.monitor.tracker import Monitor, MonitorEvent
from prefixlint.monitor.transport import AsyncMonitorTransport, MonitorTransport

__all__ = [
    "AsyncMonitorTransport",
    "Monitor",
    "MonitorEvent",
    "MonitorTransport",
    "OpenTelemetryMetrics",
    "PrometheusMetrics",
]
