"""Celery workers: a thin shell over the batch use cases in records/jobs.py.

Imported only by commands that talk to a broker (``snap worker``, ``--enqueue`` with
SNAP_BROKER_URL set, ``snap jobs --resume``): Celery and the Redis client load late.
"""
