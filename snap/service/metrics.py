"""What ``GET /metrics`` exposes, in Prometheus' text format, through prometheus_client.

A registry of its own per app (not the library's global one): two apps in one process (tests)
never share or double-register counters.  Routes are labelled by their template
(``/v1/snapshots/{snapshot_id}``), and any path that matches no route as ``unmatched``, so a
client cannot grow the label set with made-up paths.

Under ``snap serve --workers N`` each worker is its own process: prometheus_client's
multi-process mode (``PROMETHEUS_MULTIPROC_DIR``, a fresh directory per serve) keeps every
worker's values in files there, and ``/metrics`` from any worker sums them over all workers.
That mode adds ``snap_worker_requests``, the requests each worker process answered (by ``pid``),
so an uneven spread over the workers shows.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from records.vocabulary import Status

CONTENT_TYPE = CONTENT_TYPE_LATEST
UNMATCHED = "unmatched"
# Seconds: a check of an answer against captured pages takes milliseconds; a capture, seconds.
MULTIPROCESS_DIR = "PROMETHEUS_MULTIPROC_DIR"  # prometheus_client's name; set by snap serve
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
        self.shared_directory = os.environ.get(MULTIPROCESS_DIR)
        self.worker_requests: Gauge | None = None
        if self.shared_directory:  # a gauge, as a counter's multi-process value has no pid
            self.worker_requests = Gauge(
                "snap_worker_requests",
                "HTTP requests answered by each worker process of snap serve --workers.",
                registry=self.registry,
                multiprocess_mode="all",
            )

    def observe_request(self, route: str, method: str, status: int, seconds: float) -> None:
        self.requests.labels(route, method, str(status)).inc()
        self.latency.labels(route).observe(seconds)
        if self.worker_requests is not None:
            self.worker_requests.inc()

    def count_statuses(self, by_status: Mapping[Status, int]) -> None:
        for status, count in by_status.items():
            self.verifications.labels(status).inc(count)

    def capture_failed(self, error_type: str) -> None:
        self.capture_failures.labels(error_type).inc()

    def exposition(self) -> bytes:
        """This process's values, or under several workers the sum over all of them."""
        if not self.shared_directory:
            return generate_latest(self.registry)
        from prometheus_client.multiprocess import MultiProcessCollector

        every_worker = CollectorRegistry()
        MultiProcessCollector(every_worker, path=self.shared_directory)  # type: ignore[no-untyped-call]
        return generate_latest(every_worker)
