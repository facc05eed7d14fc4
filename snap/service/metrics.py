"""What ``GET /metrics`` exposes, in Prometheus' text format, through prometheus_client.

A registry of its own per app (not the library's global one): two apps in one process (tests)
never share or double-register counters.  Routes are labelled by their template
(``/v1/snapshots/{snapshot_id}``), and any path that matches no route as ``unmatched``, so a
client cannot grow the label set with made-up paths.
"""

from __future__ import annotations

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Histogram,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client.exposition import CONTENT_TYPE_LATEST

CONTENT_TYPE = CONTENT_TYPE_LATEST
UNMATCHED = "unmatched"
# Seconds: a check of an answer against captured pages takes milliseconds; a capture, seconds.
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


class Metrics:
    def __init__(self) -> None:
        disable_created_metrics()  # type: ignore[no-untyped-call]  # *_created: noise
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter(
            "snap_http_requests",
            "HTTP requests answered, by route template, method and status.",
            ("route", "method", "status"),
            registry=self.registry,
        )
        self.latency = Histogram(
            "snap_http_request_duration_seconds",
            "Time from request to the end of the response, by route template.",
            ("route",),
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.verifications = Counter(
            "snap_verifications",
            "Citations checked (POST /v1/verify and /v1/reverify), by status.",
            ("status",),
            registry=self.registry,
        )
        self.capture_failures = Counter(
            "snap_capture_failures",
            "Captures that failed (POST /v1/captures, and refetches), by error type.",
            ("error",),
            registry=self.registry,
        )

    def observe_request(self, route: str, method: str, status: int, seconds: float) -> None:
        self.requests.labels(route, method, str(status)).inc()
        self.latency.labels(route).observe(seconds)

    def count_statuses(self, by_status: dict[str, int]) -> None:
        for status, count in by_status.items():
            self.verifications.labels(status).inc(count)

    def capture_failed(self, error_type: str) -> None:
        self.capture_failures.labels(error_type).inc()

    def exposition(self) -> bytes:
        return generate_latest(self.registry)
