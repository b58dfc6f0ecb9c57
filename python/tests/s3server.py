"""A real S3 API server on this machine for the object-storage tests:
moto's threaded server on 127.0.0.1 at a free port, one bucket, and the
ways to reach it (environment variables for the CLI, ``storage_options``
for Python)."""

from __future__ import annotations

import logging
import os
import socket
from pathlib import Path

BUCKET = "tapes"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def env_for(endpoint: str, key: str = "testing", secret: str = "testing") -> dict:
    """This process's environment with the AWS variables of `endpoint` only."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(
        AWS_ENDPOINT_URL=endpoint,
        AWS_ALLOW_HTTP="true",
        AWS_ACCESS_KEY_ID=key,
        AWS_SECRET_ACCESS_KEY=secret,
        AWS_REGION="us-east-1",
    )
    return env


class Server:
    """A running moto server with bucket `BUCKET`."""

    def __init__(self) -> None:
        import boto3
        from moto.server import ThreadedMotoServer

        # One log line per request otherwise, in every failure's report.
        logging.getLogger("werkzeug").setLevel(logging.WARNING)
        port = free_port()
        self._server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
        self._server.start()
        self.endpoint = f"http://127.0.0.1:{port}"
        self.env = env_for(self.endpoint)
        #: What Python readers pass as ``storage_options`` (fsspec's keys).
        self.options = {
            "key": "testing",
            "secret": "testing",
            "endpoint_url": self.endpoint,
            "region": "us-east-1",
        }
        self.client = boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
            region_name="us-east-1",
        )
        self.client.create_bucket(Bucket=BUCKET)

    def bucket(self, name: str) -> None:
        """Makes bucket `name` if it is not there yet (tests share the
        server)."""
        if name not in {b["Name"] for b in self.client.list_buckets()["Buckets"]}:
            self.client.create_bucket(Bucket=name)

    def upload(self, root: Path, prefix: str) -> str:
        """Every file under `root` to `prefix`; the prefix's URL."""
        root = Path(root)
        files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        for p in files:
            rel = p.name if p == root else p.relative_to(root).as_posix()
            self.client.upload_file(str(p), BUCKET, f"{prefix}/{rel}")
        return url(prefix)

    def stop(self) -> None:
        self._server.stop()


def url(rel: str) -> str:
    return f"s3://{BUCKET}/{rel}"
