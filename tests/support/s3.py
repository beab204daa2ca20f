"""An S3-compatible server on 127.0.0.1 for the tests: moto in server mode, in a thread.

Inspect writes logs to `s3://` through fsspec (s3fs) and its own aiobotocore clients, and
the studies read them back through fsspec; both find the server the way a user points them
at MinIO or any other S3-compatible store: botocore's environment variables, the endpoint
in `AWS_ENDPOINT_URL` (botocore >= 1.31 reads it for every client it makes, s3fs included,
so no fsspec configuration is needed). `S3Server.environment` sets them, and clears the
ones (a profile, config files, an S3-only endpoint) through which a developer's own AWS
setup could send the tests elsewhere.

The server is started once per session (`tests/conftest.py`: `s3_server`); each test or
module makes its own bucket, so tests share no objects.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
import s3fs
from moto.server import ThreadedMotoServer

# moto accepts any key pair; these only have to be present
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}
# not us-east-1: s3fs sends a bucket's region as its location constraint, which S3 (and
# moto) refuse for us-east-1
REGION = "eu-west-1"
# variables through which a developer's AWS setup would override the test server's
CLEARED = (
    "AWS_PROFILE",
    "AWS_SESSION_TOKEN",
    "AWS_SECURITY_TOKEN",
    "AWS_ENDPOINT_URL_S3",  # an S3-only endpoint wins over AWS_ENDPOINT_URL
    "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS",
    "AWS_ROLE_ARN",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
)


@dataclass(frozen=True)
class S3Server:
    """A running server: its endpoint, and helpers that reach it without the environment."""

    endpoint: str

    def environment(self, patch: pytest.MonkeyPatch, missing: Path) -> None:
        """Point botocore (so inspect and the studies alike) at this server; `missing` is a
        path that does not exist, given for the AWS config and credentials files."""
        for name in CLEARED:
            patch.delenv(name, raising=False)
        for name, value in CREDENTIALS.items():
            patch.setenv(name, value)
        patch.setenv("AWS_DEFAULT_REGION", REGION)
        patch.setenv("AWS_ENDPOINT_URL", self.endpoint)
        patch.setenv("AWS_CONFIG_FILE", str(missing))
        patch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(missing))
        patch.setenv("AWS_EC2_METADATA_DISABLED", "true")  # no instance-metadata probe
        forget_filesystems()

    def filesystem(self) -> s3fs.S3FileSystem:
        """An s3fs filesystem on this server, configured explicitly (not from the env)."""
        return s3fs.S3FileSystem(
            key=CREDENTIALS["AWS_ACCESS_KEY_ID"],
            secret=CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
            endpoint_url=self.endpoint,
            client_kwargs={"region_name": REGION},
            skip_instance_cache=True,
            use_listings_cache=False,
        )

    def bucket(self, prefix: str = "bench") -> str:
        """A new, empty bucket; its URL (`s3://<prefix>-<random>`)."""
        name = f"{prefix}-{uuid.uuid4().hex[:8]}"
        self.filesystem().mkdir(name)
        return f"s3://{name}"

    def put(self, url: str, data: bytes) -> None:
        """Store `data` as the object `url`."""
        self.filesystem().pipe_file(url, data)

    def download(self, url: str, folder: Path) -> Path:
        """Copy every object under `url` into `folder` (same relative names); the folder."""
        fs = self.filesystem()
        root = url.removeprefix("s3://").rstrip("/")
        for key in fs.find(root):
            target = folder / key.removeprefix(root).lstrip("/")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(fs.cat_file(key))
        return folder


def forget_filesystems() -> None:
    """Drop fsspec's cached S3 filesystems: each was built for the environment of its day
    (the endpoint and credentials are read once, when it is made), and fsspec would hand
    it out again under another environment."""
    s3fs.S3FileSystem.clear_instance_cache()


@contextmanager
def serve() -> Iterator[S3Server]:
    """Run a moto server on a free port of 127.0.0.1 for the duration of the block."""
    werkzeug = logging.getLogger("werkzeug")  # one INFO line per request otherwise
    level = werkzeug.level
    werkzeug.setLevel(logging.WARNING)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        yield S3Server(f"http://{host}:{port}")
    finally:
        server.stop()
        forget_filesystems()
        werkzeug.setLevel(level)
