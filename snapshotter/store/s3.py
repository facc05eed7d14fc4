"""The S3 store: one write-once, Object-Locked ``PutObject`` per blob, verified on every read.

Why each request looks the way it does:

* ``IfNoneMatch='*'`` makes the write create-if-absent on the server, so concurrent writers of
  the same content leave one object; a 412 means "already stored", which is confirmed, not
  treated as an error.
* ``ChecksumSHA256`` is snap's own digest, so S3 refuses an upload corrupted in transit; a
  single ``PutObject`` (never multipart) keeps S3's checksum a checksum of the whole object.
* Object Lock retention keeps the version from being deleted or shortened until it expires.
  What is recorded is what S3 reports when the object is read back (``HeadObject`` on the
  version just written), never what was asked for; a bucket without Object Lock is refused
  unless the store is configured without retention (``lock_mode="NONE"``).
* A blob larger than ``HEAD_FIRST_BYTES`` is looked up with ``HeadObject`` first: S3 refuses a
  conditional put of an existing key only after the body was sent (LocalStack answers 412
  before reading it and leaves the client waiting for its read timeout), so re-storing a large
  capture would cost a whole upload, or a minute.  The put stays conditional: two writers
  that both find the key absent still leave one object.

boto3 is imported lazily: the folder store, and commands that never touch S3, do not pay for it.
"""

from __future__ import annotations

import base64
import io
import os
import re
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import urlencode

from snapshotter.errors import BlobNotFound, ConfigError, IntegrityError, SnapError, StoreError
from snapshotter.store.base import KINDS, StoredBlob, blob_key
from snapshotter.store.hashing import (
    CHUNK_SIZE,
    NullSink,
    check_address,
    copy_verified,
    require_digest,
    source_digest,
)

LOCK_MODES = ("GOVERNANCE", "COMPLIANCE")
NO_LOCK = "NONE"  # explicitly without retention: nothing is asked for, nothing is claimed
TAG_NAMES = ("extractor", "normalizer")
DEFAULT_REGION = "us-east-1"
# S3 answers 409 while another conditional write of the same key is in flight: retry briefly.
CONFLICT_RETRIES = 6
# Above this size a HEAD (one small round trip) is cheaper than risking a refused upload.
HEAD_FIRST_BYTES = 4 * 1024 * 1024
# Characters AWS documents as allowed in tag values; anything else becomes "_".
_TAG_UNSAFE = re.compile(r"[^\w .:/=+\-@]")
_DENIED_CODES = ("AccessDenied", "403", "Forbidden", "InvalidAccessKeyId", "SignatureDoesNotMatch")
_KEY_PATTERN = re.compile(r"^(?P<kind>[a-z]+)/sha256/(?P<fan>[0-9a-f]{2})/(?P<hex>[0-9a-f]{64})$")


@dataclass(frozen=True)
class BucketStatus:
    """What ``snap store init`` reports about the bucket."""

    bucket: str
    created: bool
    object_lock_enabled: bool


def make_s3_client() -> Any:
    """An S3 client from boto3's standard configuration chain.

    ``AWS_ENDPOINT_URL`` / ``AWS_ENDPOINT_URL_S3``, ``AWS_PROFILE``, ``AWS_DEFAULT_REGION`` /
    ``AWS_REGION``, the shared config and credential files all apply; the region falls back to
    us-east-1 so a bare endpoint (LocalStack) works without a config file.
    """
    import boto3
    from botocore.config import Config
    from botocore.exceptions import BotoCoreError

    try:
        session = boto3.session.Session()
        # botocore reads AWS_DEFAULT_REGION and profiles but not AWS_REGION, which the other
        # AWS SDKs and most CI systems set; honour it too before falling back.
        region = session.region_name or os.environ.get("AWS_REGION") or DEFAULT_REGION
        config = Config(retries={"mode": "standard"}, connect_timeout=10, read_timeout=60)
        return session.client("s3", region_name=region, config=config)
    except BotoCoreError as error:
        raise ConfigError(f"S3 client configuration: {error}") from None


def tagging(kind: str, tags: Mapping[str, str]) -> str:
    """The URL-encoded ``Tagging`` value: ``kind`` plus the extractor and normalizer ids.

    Values are cut to S3's 256 characters and characters outside AWS's tag alphabet are
    replaced (e.g. the commas of an extractor id); the database keeps the exact ids.
    """
    values = {"kind": kind} | {name: tags[name] for name in TAG_NAMES if tags.get(name)}
    return urlencode({name: _TAG_UNSAFE.sub("_", value)[:256] for name, value in values.items()})


def _error_code(error: Any) -> str:
    return str(error.response.get("Error", {}).get("Code", ""))


def _http_status(error: Any) -> int | None:
    status = error.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    return int(status) if status is not None else None


def _is_not_found(error: Any) -> bool:
    """A missing key (or bucket, for HEAD requests, whose 404 carries no code)."""
    code = _error_code(error)
    if code:
        return code in ("NoSuchKey", "NoSuchVersion", "NotFound", "404")
    return _http_status(error) == 404


def _is_denied(error: Any) -> bool:
    return _error_code(error) in _DENIED_CODES or _http_status(error) == 403


def _full_object_sha256(response: Mapping[str, Any]) -> str | None:
    """S3's stored SHA-256 as ``sha256:<hex>``, or None when absent or a composite checksum."""
    value = response.get("ChecksumSHA256")
    if not value or "-" in value or response.get("ChecksumType") == "COMPOSITE":
        return None
    return "sha256:" + base64.b64decode(value).hex()


def _version(version_id: str | None) -> dict[str, str]:
    """The VersionId argument when a version was recorded (none: the latest)."""
    return {} if version_id is None else {"VersionId": version_id}


def _utc(moment: datetime | None) -> datetime | None:
    return None if moment is None else moment.astimezone(UTC)


class S3Store:
    """Write-once blob storage in an S3 bucket with Object Lock; every read re-hashes."""

    def __init__(
        self,
        bucket: str,
        prefix: str = "",
        *,
        lock_mode: str = "GOVERNANCE",
        lock_days: int = 365,
        client: Any = None,
    ) -> None:
        if not bucket:
            raise ConfigError("an S3 store needs a bucket name (s3://bucket/prefix)")
        if lock_mode not in (*LOCK_MODES, NO_LOCK):
            raise ConfigError(
                f"lock mode must be GOVERNANCE or COMPLIANCE (or NONE), got {lock_mode!r}"
            )
        if lock_days < 1:
            raise ConfigError(f"lock days must be at least 1, got {lock_days}")
        self.bucket = bucket
        self.prefix = prefix.strip("/")
        self.lock_mode = lock_mode
        self.lock_days = lock_days
        self.location = f"s3://{bucket}/{self.prefix}" if self.prefix else f"s3://{bucket}"
        self.client = client if client is not None else make_s3_client()
        self._lock_checked = lock_mode == NO_LOCK

    def __repr__(self) -> str:
        return f"S3Store({self.location!r}, lock_mode={self.lock_mode!r})"

    def key_of(self, kind: str, digest: str) -> str:
        """The object key: the optional prefix, then a key derived from the digest alone."""
        check_address(kind, digest)
        key = blob_key(kind, digest)
        return f"{self.prefix}/{key}" if self.prefix else key

    # -- writing -------------------------------------------------------------------------------

    def put(
        self, kind: str, digest: str, source: Path | bytes, *, tags: Mapping[str, str]
    ) -> StoredBlob:
        key = self.key_of(kind, digest)
        actual, size = source_digest(source)
        require_digest(key, digest, actual)
        self._require_object_lock()
        if size > HEAD_FIRST_BYTES:
            found = self._stored_copy(kind, digest, size, denied_is_absent=True)
            if found is not None:
                return found
        for attempt in range(CONFLICT_RETRIES):
            try:
                return self._put_once(kind, digest, key, source, size, tags)
            except _AlreadyStored:
                return self._confirm_existing(kind, digest, size)
            except _WriteConflict:
                time.sleep(0.05 * 2**attempt)
        raise StoreError(f"S3 kept answering 409 Conflict for {key} in bucket {self.bucket!r}")

    def _put_once(
        self,
        kind: str,
        digest: str,
        key: str,
        source: Path | bytes,
        size: int,
        tags: Mapping[str, str],
    ) -> StoredBlob:
        from botocore.exceptions import ClientError

        request: dict[str, Any] = {
            "Bucket": self.bucket,
            "Key": key,
            "ContentLength": size,
            "ContentType": "application/octet-stream",
            "IfNoneMatch": "*",
            "ChecksumAlgorithm": "SHA256",
            "ChecksumSHA256": base64.b64encode(bytes.fromhex(digest[7:])).decode("ascii"),
        }
        if self.lock_mode != NO_LOCK:
            retain_until = datetime.now(UTC).replace(microsecond=0)
            request["ObjectLockMode"] = self.lock_mode
            request["ObjectLockRetainUntilDate"] = retain_until + timedelta(days=self.lock_days)
        request["Tagging"] = tagging(kind, tags)
        with self._boundary("PutObject", key), _body(source) as body:
            try:
                response = self.client.put_object(Body=body, **request)
            except ClientError as error:
                if _error_code(error) == "PreconditionFailed" or _http_status(error) == 412:
                    raise _AlreadyStored from None
                if _error_code(error) == "ConditionalRequestConflict":
                    raise _WriteConflict from None
                if _error_code(error) in ("BadDigest", "XAmzContentSHA256Mismatch"):
                    raise StoreError(
                        f"S3 rejected {key} in bucket {self.bucket!r}: the upload was corrupted"
                        " in transit (its checksum did not match)"
                    ) from None
                raise
        return self._read_back(kind, digest, response.get("VersionId"))

    def _read_back(self, kind: str, digest: str, version_id: str | None) -> StoredBlob:
        """The version just written, with the retention S3 reports for it (not what we asked)."""
        found = self._head(kind, digest, version_id=version_id)
        if found is None:
            raise StoreError(
                f"S3 accepted {self.key_of(kind, digest)} in bucket {self.bucket!r}"
                " but cannot find it when read back"
            )
        blob = found[1]
        if self.lock_mode != NO_LOCK and (blob.lock_mode is None or blob.retain_until is None):
            raise StoreError(
                f"S3 reports no Object Lock retention on {blob.key} in bucket {self.bucket!r}"
                f" although {self.lock_mode} retention was requested; the evidence could be"
                " deleted (check the bucket's Object Lock settings)"
            )
        return replace(blob, created=True)

    def _require_object_lock(self) -> None:
        """Refuse, once per store, to write evidence into a bucket without Object Lock."""
        if self._lock_checked:
            return
        if not self._lock_enabled():
            raise StoreError(
                f"S3 bucket {self.bucket!r} reports no Object Lock, so stored evidence could be"
                " deleted; use a bucket made by 'snap store init', or set"
                " SNAP_S3_LOCK_MODE=none to store without retention"
            )
        self._lock_checked = True

    def _confirm_existing(self, kind: str, digest: str, size: int) -> StoredBlob:
        """After a 412: the key exists, so it must be found, and be what we were asked to store."""
        found = self._stored_copy(kind, digest, size)
        if found is None:
            raise StoreError(f"S3 said {self.key_of(kind, digest)} exists but it cannot be found")
        return found

    def _stored_copy(
        self, kind: str, digest: str, size: int, *, denied_is_absent: bool = False
    ) -> StoredBlob | None:
        """The stored blob, checked to be this content (by S3's checksum, else by reading it
        back), or None when nothing is stored under its key.

        ``denied_is_absent``: for the look before a put, a writer not allowed to read still
        gets its conditional put, as it did before the look."""
        blob = self._head(kind, digest, denied_is_absent=denied_is_absent)
        if blob is None:
            return None
        stored, found = blob
        if stored is not None:
            require_digest(found.key, digest, stored)
            if found.size != size:
                raise IntegrityError(found.key, f"{digest} ({size} bytes)", f"{found.size} bytes")
        else:
            self.read_into(kind, digest, NullSink())
        return found

    # -- reading -------------------------------------------------------------------------------

    def get(self, kind: str, digest: str, *, version_id: str | None = None) -> bytes:
        """The whole blob, verified before any byte is handed out."""
        buffer = io.BytesIO()
        self.read_into(kind, digest, buffer, version_id=version_id)
        return buffer.getvalue()

    def read_into(
        self, kind: str, digest: str, sink: BinaryIO, *, version_id: str | None = None
    ) -> int:
        """Stream the recorded version (the latest when none is given) into ``sink``, checked
        against the key and S3's checksum. The recorded version is the evidence: under Object
        Lock it cannot be changed or deleted, while the latest can be a delete marker or a
        newer version that anyone with PutObject can add."""
        key = self.key_of(kind, digest)
        with self._boundary("GetObject", key, missing=(kind, digest)):
            response = self.client.get_object(
                Bucket=self.bucket, Key=key, ChecksumMode="ENABLED", **_version(version_id)
            )
            size = copy_verified(_body_chunks(response["Body"]), sink, key=key, digest=digest)
        stored = _full_object_sha256(response)
        if stored is not None:
            require_digest(key, digest, stored)
        return size

    def head(self, kind: str, digest: str, *, version_id: str | None = None) -> StoredBlob | None:
        found = self._head(kind, digest, version_id)
        return None if found is None else found[1]

    def shadowing(self, kind: str, digest: str, version_id: str | None) -> str | None:
        """What ListObjectVersions shows above the recorded version, if anything."""
        if version_id is None:
            return None
        key = self.key_of(kind, digest)
        newest = None
        paginator = self.client.get_paginator("list_object_versions")
        with self._boundary("ListObjectVersions", key):
            for page in paginator.paginate(Bucket=self.bucket, Prefix=key):
                for kind_name in ("Versions", "DeleteMarkers"):
                    for entry in page.get(kind_name, []):
                        if entry["Key"] == key and entry.get("IsLatest"):
                            newest = (kind_name, entry)
        if newest is None or newest[1].get("VersionId") == version_id:
            return None
        kind_name, entry = newest
        what = "a delete marker" if kind_name == "DeleteMarkers" else "a newer version"
        when = _utc(entry.get("LastModified"))
        return (
            f"{what} (version {entry.get('VersionId')}, {when:%Y-%m-%dT%H:%M:%SZ}) sits on top"
            f" of the recorded version {version_id}; the evidence is intact. Who wrote it is"
            f" in the bucket's CloudTrail data events or server access logs for {key}"
            if when
            else f"{what} sits on top of the recorded version {version_id}"
        )

    def probe(self) -> None:
        with self._boundary("HeadBucket", "/"):
            self.client.head_bucket(Bucket=self.bucket)

    def _head(
        self,
        kind: str,
        digest: str,
        version_id: str | None = None,
        *,
        denied_is_absent: bool = False,
    ) -> tuple[str | None, StoredBlob] | None:
        """S3's stored SHA-256 (if any) and the blob's metadata, or None when absent."""
        from botocore.exceptions import ClientError

        key = self.key_of(kind, digest)
        request: dict[str, Any] = {"Bucket": self.bucket, "Key": key, "ChecksumMode": "ENABLED"}
        if version_id:
            request["VersionId"] = version_id
        with self._boundary("HeadObject", key):
            try:
                response = self.client.head_object(**request)
            except ClientError as error:
                if _is_not_found(error) or (denied_is_absent and _is_denied(error)):
                    return None
                raise
        blob = StoredBlob(
            kind,
            digest,
            key,
            int(response["ContentLength"]),
            version_id=response.get("VersionId"),
            lock_mode=response.get("ObjectLockMode"),
            retain_until=_utc(response.get("ObjectLockRetainUntilDate")),
        )
        return _full_object_sha256(response), blob

    def iterate(self) -> Iterator[tuple[str, str]]:
        """Every (kind, digest) under the prefix that has any version, in key order; foreign
        keys are skipped. Versions, not objects: a key whose latest entry is a delete marker
        still holds its locked evidence."""
        lead = f"{self.prefix}/" if self.prefix else ""
        paginator = self.client.get_paginator("list_object_versions")
        seen: set[str] = set()
        with self._boundary("ListObjectVersions", lead or "/"):
            for page in paginator.paginate(Bucket=self.bucket, Prefix=lead):
                for entry in page.get("Versions", []):
                    key = entry["Key"]
                    match = _KEY_PATTERN.match(key[len(lead) :])
                    if key in seen or not match:
                        continue
                    seen.add(key)
                    if match["kind"] in KINDS and match["hex"][:2] == match["fan"]:
                        yield match["kind"], f"sha256:{match['hex']}"

    # -- the bucket ----------------------------------------------------------------------------

    def init_bucket(self) -> BucketStatus:
        """Create the bucket with Object Lock if missing; report whether an existing one has it."""
        from botocore.exceptions import ClientError

        with self._boundary("HeadBucket", "/"):
            try:
                self.client.head_bucket(Bucket=self.bucket)
            except ClientError as error:
                if not _is_not_found(error) and _error_code(error) != "NoSuchBucket":
                    raise
                if self._create_bucket():
                    return BucketStatus(self.bucket, created=True, object_lock_enabled=True)
        return BucketStatus(self.bucket, created=False, object_lock_enabled=self._lock_enabled())

    def _create_bucket(self) -> bool:
        """True when this call created it; False when a concurrent caller won the race."""
        from botocore.exceptions import ClientError

        request: dict[str, Any] = {"Bucket": self.bucket, "ObjectLockEnabledForBucket": True}
        region = self.client.meta.region_name
        if region and region != DEFAULT_REGION:
            request["CreateBucketConfiguration"] = {"LocationConstraint": region}
        try:
            self.client.create_bucket(**request)
        except ClientError as error:
            if _error_code(error) == "BucketAlreadyOwnedByYou":
                return False
            raise
        return True

    def _lock_enabled(self) -> bool:
        from botocore.exceptions import ClientError

        with self._boundary("GetObjectLockConfiguration", "/"):
            try:
                response = self.client.get_object_lock_configuration(Bucket=self.bucket)
            except ClientError as error:
                if _error_code(error) == "ObjectLockConfigurationNotFoundError":
                    return False
                raise
        setting = response.get("ObjectLockConfiguration", {}).get("ObjectLockEnabled")
        return bool(setting == "Enabled")

    # -- errors --------------------------------------------------------------------------------

    @contextmanager
    def _boundary(
        self, action: str, key: str, *, missing: tuple[str, str] | None = None
    ) -> Iterator[None]:
        """Turn botocore's exceptions into snap's: one line that names the bucket."""
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            yield
        except ClientError as error:
            if missing is not None and _is_not_found(error):
                kind, digest = missing
                raise BlobNotFound(f"no {kind} blob {digest} in {self.location}") from None
            raise self._client_error(action, key, error) from None
        except BotoCoreError as error:
            raise self._transport_error(action, error) from None

    def _client_error(self, action: str, key: str, error: Any) -> SnapError:
        code = _error_code(error) or str(_http_status(error))
        where = f"S3 bucket {self.bucket!r}"
        if code == "NoSuchBucket":
            return StoreError(f"{where} does not exist (create it with 'snap store init')")
        if code in _DENIED_CODES:
            return StoreError(f"access denied to {where} ({action} {key}: {code})")
        if code == "InvalidRequest" and "objectlock" in str(error).lower().replace(" ", ""):
            return StoreError(f"{where} does not have Object Lock enabled; snap needs it")
        message = error.response.get("Error", {}).get("Message", "")
        return StoreError(f"{action} {key} in {where} failed: {code} {message}".strip())

    def _transport_error(self, action: str, error: Exception) -> SnapError:
        from botocore.exceptions import NoCredentialsError, ProfileNotFound

        where = f"S3 bucket {self.bucket!r}"
        if isinstance(error, NoCredentialsError):
            return StoreError(
                f"no AWS credentials for {where} (set AWS_PROFILE or AWS_ACCESS_KEY_ID)"
            )
        if isinstance(error, ProfileNotFound):
            return ConfigError(f"{error} (needed for {where})")
        endpoint = self.client.meta.endpoint_url
        return StoreError(f"cannot reach {where} at {endpoint} ({action}): {error}")


class _AlreadyStored(Exception):
    """Internal: the conditional write found the key present (HTTP 412)."""


class _WriteConflict(Exception):
    """Internal: another conditional write of the key is in flight (HTTP 409)."""


@contextmanager
def _body(source: Path | bytes) -> Iterator[BinaryIO]:
    """The request body: bytes as they are, a file opened for the duration of the request."""
    if isinstance(source, bytes):
        yield io.BytesIO(source)
        return
    try:
        stream = source.open("rb")
    except OSError as error:
        raise StoreError(f"cannot read {source}: {error.strerror or error}") from None
    with stream:
        yield stream


def _body_chunks(body: Any) -> Iterator[bytes]:
    """The response body in chunks.

    botocore's own response-checksum check is dropped in favour of snap's: the bytes are
    compared with the key and with S3's stored SHA-256 afterwards, which is strictly stronger
    and yields an IntegrityError with both digests instead of a transport error.
    """
    from botocore.exceptions import FlexibleChecksumError

    try:
        yield from body.iter_chunks(CHUNK_SIZE)
    except FlexibleChecksumError:
        return
    finally:
        body.close()
