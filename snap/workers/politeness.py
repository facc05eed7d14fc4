"""Per-host politeness for captures: at most N captures of one host at once, over all
workers, and at least D seconds between the starts of two of them.

With a Redis broker the limits are shared by every worker: a Lua script (atomic on the Redis
server, timed by the server's clock) keeps, per host, a sorted set of slot leases and the time
the next capture may start. A lease expires after the capture deadline, so a worker killed
while holding a slot does not block its host for ever. Celery's own ``rate_limit`` is per
worker process and per task type, not per host, so it cannot express this; routing each host
to a queue of its own would need a queue per host. With another broker (RabbitMQ) the limits
hold per worker process only.
"""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

from snap.config import Settings
from snap.errors import BrokerError
from snap.workers.broker import key_prefix

ACQUIRE = """
local slots, next_key = KEYS[1], KEYS[2]
local limit, delay, lease, token = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
redis.call('ZREMRANGEBYSCORE', slots, '-inf', now)
if redis.call('ZCARD', slots) >= limit then
  local first = redis.call('ZRANGE', slots, 0, 0, 'WITHSCORES')
  return tostring(math.min(tonumber(first[2]) - now, 1))
end
local next_at = tonumber(redis.call('GET', next_key) or '0')
if now < next_at then
  return tostring(next_at - now)
end
redis.call('ZADD', slots, now + lease, token)
redis.call('EXPIRE', slots, math.ceil(lease) + 60)
redis.call('SET', next_key, tostring(now + delay), 'PX', math.ceil((delay + 1) * 1000))
return '0'
"""
POLL = 0.05  # the shortest wait between two tries for a slot


def host_of(url: str) -> str:
    try:
        return (urlsplit(url).hostname or "").lower() or "-"
    except ValueError:
        return "-"


class RedisPoliteness:
    def __init__(self, settings: Settings) -> None:
        import redis

        assert settings.broker_url is not None
        self.client: Any = redis.Redis.from_url(settings.broker_url)
        self.script = self.client.register_script(ACQUIRE)
        self.prefix = f"{key_prefix(settings)}host"
        self.limit = settings.host_concurrency
        self.delay = settings.host_delay
        self.lease = settings.capture_deadline + 30

    def wait(self, host: str, token: str) -> float:
        """0 when the slot is taken, else how long to wait before asking again."""
        keys = [f"{self.prefix}:{host}:slots", f"{self.prefix}:{host}:next"]
        args: list[float | str] = [self.limit, self.delay, self.lease, token]
        return float(self.script(keys=keys, args=args))

    def release(self, host: str, token: str) -> None:
        self.client.zrem(f"{self.prefix}:{host}:slots", token)


class LocalPoliteness:
    """The same limits within one process (a broker other than Redis)."""

    def __init__(self, settings: Settings) -> None:
        self.limit = settings.host_concurrency
        self.delay = settings.host_delay
        self.lock = threading.Lock()
        self.running: dict[str, set[str]] = {}
        self.next_at: dict[str, float] = {}

    def wait(self, host: str, token: str) -> float:
        with self.lock:
            now = time.monotonic()
            holders = self.running.setdefault(host, set())
            if len(holders) >= self.limit:
                return POLL
            if now < self.next_at.get(host, 0.0):
                return self.next_at[host] - now
            holders.add(token)
            self.next_at[host] = now + self.delay
            return 0.0

    def release(self, host: str, token: str) -> None:
        with self.lock:
            self.running.get(host, set()).discard(token)


class Politeness:
    def __init__(self, settings: Settings) -> None:
        redis_broker = (settings.broker_url or "").startswith(("redis://", "rediss://"))
        self.limits: RedisPoliteness | LocalPoliteness = (
            RedisPoliteness(settings) if redis_broker else LocalPoliteness(settings)
        )

    @contextmanager
    def slot(self, url: str) -> Iterator[None]:
        """Held for the whole capture of ``url``; waits for it in place (the worker's pool
        process has nothing else to do: it holds one message)."""
        host, token = host_of(url), uuid.uuid4().hex
        with broker_errors():
            while (wait := self.limits.wait(host, token)) > 0:
                time.sleep(max(wait, POLL))
        try:
            yield
        finally:
            with contextlib.suppress(BrokerError), broker_errors():
                self.limits.release(host, token)  # if Redis is gone, the lease expires


@contextmanager
def broker_errors() -> Iterator[None]:
    """Redis unreachable mid-batch is a transient BrokerError: the task is tried again."""
    import redis

    try:
        yield
    except redis.RedisError as error:
        raise BrokerError(f"the per-host limits in Redis cannot be used: {error}") from None
