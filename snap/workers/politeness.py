"""Per-host politeness for captures: at most N captures of one host at once, over all
workers, and at least D seconds between the starts of two of them.

With a Redis broker the limits are shared by every worker: a Lua script (atomic on the Redis
server, timed by the server's clock) keeps, per host, a sorted set of slot leases and the time
the next capture may start. A lease is short (``LEASE_SECONDS``) and renewed while its capture
runs, so a worker killed while holding a slot frees it within that time, not after a whole
capture deadline (five minutes by default, which stalled a batch of small pages as long).
Celery's own ``rate_limit`` is per worker process and per task type, not per host, so it cannot
express this; routing each host to a queue of its own would need a queue per host. With
another broker (RabbitMQ) the limits hold per worker process only.
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
RENEW = """
local slots, lease, token = KEYS[1], tonumber(ARGV[1]), ARGV[2]
if not redis.call('ZSCORE', slots, token) then
  return 0
end
local t = redis.call('TIME')
redis.call('ZADD', slots, 'XX', tonumber(t[1]) + tonumber(t[2]) / 1000000 + lease, token)
redis.call('EXPIRE', slots, math.ceil(lease) + 60)
return 1
"""
POLL = 0.05  # the shortest wait between two tries for a slot
LEASE_SECONDS = 30.0  # how long a slot of a worker that died stays taken
RENEWALS_PER_LEASE = 3  # a lease is renewed this often within its time: one late try is no loss


def host_of(url: str) -> str:
    try:
        return (urlsplit(url).hostname or "").lower() or "-"
    except ValueError:
        return "-"


class RedisPoliteness:
    def __init__(self, settings: Settings, lease: float = LEASE_SECONDS) -> None:
        import redis

        assert settings.broker_url is not None
        self.client: Any = redis.Redis.from_url(settings.broker_url)
        self.script = self.client.register_script(ACQUIRE)
        self.renewal = self.client.register_script(RENEW)
        self.prefix = f"{key_prefix(settings)}host"
        self.limit = settings.host_concurrency
        self.delay = settings.host_delay
        self.lease = lease

    def wait(self, host: str, token: str) -> float:
        """0 when the slot is taken, else how long to wait before asking again."""
        keys = [f"{self.prefix}:{host}:slots", f"{self.prefix}:{host}:next"]
        args: list[float | str] = [self.limit, self.delay, self.lease, token]
        return float(self.script(keys=keys, args=args))

    def renew(self, host: str, token: str) -> None:
        """The lease of a slot still held, for another ``lease`` seconds from now."""
        self.renewal(keys=[f"{self.prefix}:{host}:slots"], args=[self.lease, token])

    def release(self, host: str, token: str) -> None:
        self.client.zrem(f"{self.prefix}:{host}:slots", token)


class LocalPoliteness:
    """The same limits within one process (a broker other than Redis)."""

    def __init__(self, settings: Settings) -> None:
        self.limit = settings.host_concurrency
        self.delay = settings.host_delay
        self.lease = LEASE_SECONDS  # nothing expires here: only how often ``renew`` is called
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

    def renew(self, host: str, token: str) -> None:
        """Nothing: a slot of this process is freed when the process is gone."""

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
        done = threading.Event()
        renewing = threading.Thread(
            target=self._renew, args=(host, token, done), name="snap-slot-lease", daemon=True
        )
        renewing.start()
        try:
            yield
        finally:
            done.set()
            renewing.join()
            with contextlib.suppress(BrokerError), broker_errors():
                self.limits.release(host, token)  # if Redis is gone, the lease expires

    def _renew(self, host: str, token: str, done: threading.Event) -> None:
        """Keep the slot's lease from running out while its capture runs; a failed renewal
        (Redis gone for a moment) is tried again at the next turn."""
        interval = self.limits.lease / RENEWALS_PER_LEASE
        while not done.wait(interval):
            with contextlib.suppress(BrokerError), broker_errors():
                self.limits.renew(host, token)


@contextmanager
def broker_errors() -> Iterator[None]:
    """Redis unreachable mid-batch is a transient BrokerError: the task is tried again."""
    import redis

    try:
        yield
    except redis.RedisError as error:
        raise BrokerError(f"the per-host limits in Redis cannot be used: {error}") from None
