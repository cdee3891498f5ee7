"""Counters and gauges for Prometheus and OpenTelemetry; each client is imported only when used.

Metrics (label or attribute ``route``; events add ``cause`` and ``component``, the kind of
component: ``model``, ``params``, ``tools``, ``system`` or ``messages``):

- ``prefixlint_monitor_requests_total``: requests observed;
- ``prefixlint_monitor_stable_prefix_chars``: gauge, characters of serialised request shared
  with the best matching recent request of the route;
- ``prefixlint_monitor_prompt_tokens_total`` / ``prefixlint_monitor_cached_tokens_total``: as
  reported by the provider;
- ``prefixlint_monitor_prefix_breaks_total``: requests whose prefix broke, by cause;
- ``prefixlint_monitor_cache_drops_total``: provider cache reads that dropped while the prefix
  held, by cause (``ttl-expired``, ``evicted``).

OpenTelemetry instruments use the same names with dots (``prefixlint.monitor.requests``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from prefixlint.request import Usage

if TYPE_CHECKING:
    from opentelemetry.metrics import MeterProvider
    from prometheus_client import CollectorRegistry


class MetricsSink(Protocol):
    def request(self, route: str, stable_chars: int) -> None: ...

    def usage(self, route: str, usage: Usage) -> None: ...

    def event(self, route: str, kind: str, cause: str, component: str) -> None: ...


class PrometheusMetrics:
    """Prometheus counters and gauges, registered in ``registry`` (the default one if None)."""

    def __init__(
        self, registry: CollectorRegistry | None = None, namespace: str = "prefixlint_monitor"
    ) -> None:
        import prometheus_client as prom

        registry = prom.REGISTRY if registry is None else registry
        self.requests = prom.Counter(
            f"{namespace}_requests", "Requests observed", ["route"], registry=registry
        )
        self.stable = prom.Gauge(
            f"{namespace}_stable_prefix_chars",
            "Serialised characters shared with the best matching recent request",
            ["route"],
            registry=registry,
        )
        self.prompt_tokens = prom.Counter(
            f"{namespace}_prompt_tokens", "Prompt tokens reported", ["route"], registry=registry
        )
        self.cached_tokens = prom.Counter(
            f"{namespace}_cached_tokens",
            "Cached prompt tokens reported",
            ["route"],
            registry=registry,
        )
        self.breaks = prom.Counter(
            f"{namespace}_prefix_breaks",
            "Requests whose stable prefix broke",
            ["route", "cause", "component"],
            registry=registry,
        )
        self.drops = prom.Counter(
            f"{namespace}_cache_drops",
            "Provider cache reads that dropped while the prefix held",
            ["route", "cause"],
            registry=registry,
        )

    def request(self, route: str, stable_chars: int) -> None:
        self.requests.labels(route).inc()
        self.stable.labels(route).set(stable_chars)

    def usage(self, route: str, usage: Usage) -> None:
        self.prompt_tokens.labels(route).inc(usage.prompt_tokens or 0)
        self.cached_tokens.labels(route).inc(usage.cached_tokens or 0)

    def event(self, route: str, kind: str, cause: str, component: str) -> None:
        if kind == "prefix-break":
            self.breaks.labels(route, cause, component).inc()
        else:
            self.drops.labels(route, cause).inc()


class OpenTelemetryMetrics:
    """OpenTelemetry instruments from ``meter_provider`` (the global one if None)."""

    def __init__(
        self, meter_provider: MeterProvider | None = None, prefix: str = "prefixlint.monitor"
    ) -> None:
        from opentelemetry import metrics

        meter = metrics.get_meter("prefixlint.monitor", meter_provider=meter_provider)
        self.requests = meter.create_counter(f"{prefix}.requests", description="Requests observed")
        self.stable = meter.create_gauge(
            f"{prefix}.stable_prefix_chars",
            unit="{char}",
            description="Serialised characters shared with the best matching recent request",
        )
        self.prompt_tokens = meter.create_counter(f"{prefix}.prompt_tokens", unit="{token}")
        self.cached_tokens = meter.create_counter(f"{prefix}.cached_tokens", unit="{token}")
        self.breaks = meter.create_counter(f"{prefix}.prefix_breaks")
        self.drops = meter.create_counter(f"{prefix}.cache_drops")

    def request(self, route: str, stable_chars: int) -> None:
        self.requests.add(1, {"route": route})
        self.stable.set(stable_chars, {"route": route})

    def usage(self, route: str, usage: Usage) -> None:
        self.prompt_tokens.add(usage.prompt_tokens or 0, {"route": route})
        self.cached_tokens.add(usage.cached_tokens or 0, {"route": route})

    def event(self, route: str, kind: str, cause: str, component: str) -> None:
        if kind == "prefix-break":
            self.breaks.add(1, {"route": route, "cause": cause, "component": component})
        else:
            self.drops.add(1, {"route": route, "cause": cause})
