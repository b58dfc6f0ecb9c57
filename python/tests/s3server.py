"""A real S3 API server on this machine for the object-storage tests:
moto's threaded server on 127.0.0.1 at a free port, one bucket, and the
ways to reach it (environment variables for the CLI, ``storage_options``
for Python)."""

from __future__ import annotations

import logging
import os
import re
import socket
import threading
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


class Relay:
    """127.0.0.1:port -> the server at `upstream`: counts the requests
    clients send and the response bytes they get (every process's, in one
    place: the benchmarks' measure), and with `budget`, forwards that many
    response bytes, then cuts every connection and stops listening, as a
    server that dies mid-read."""

    REQUEST = re.compile(rb"(?:GET|HEAD|PUT|POST|DELETE) \S+ HTTP/1\.1\r\n")

    def __init__(self, upstream: int, budget: int | None = None) -> None:
        self.upstream, self.budget = upstream, budget
        self.lock = threading.Lock()
        self.requests = self.bytes = 0
        self.conns: list[socket.socket] = []
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(128)
        self.port = self.sock.getsockname()[1]
        self.endpoint = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self._accept, daemon=True).start()

    def counts(self) -> tuple[int, int]:
        """(requests, response bytes) so far."""
        with self.lock:
            return self.requests, self.bytes

    def _die(self) -> None:
        for s in [self.sock, *self.conns]:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def _accept(self) -> None:
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            u = socket.create_connection(("127.0.0.1", self.upstream))
            with self.lock:
                self.conns += [c, u]
            threading.Thread(target=self._pump, args=(c, u, False), daemon=True).start()
            threading.Thread(target=self._pump, args=(u, c, True), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, response: bool) -> None:
        try:
            while b := src.recv(1 << 20):
                with self.lock:
                    if not response:
                        self.requests += len(self.REQUEST.findall(b))
                        keep = len(b)
                    elif self.budget is None:
                        keep = len(b)
                    else:
                        keep = max(0, min(len(b), self.budget))
                        self.budget -= keep
                    self.bytes += keep if response else 0
                dst.sendall(b[:keep])
                if keep < len(b):
                    self._die()
                    return
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
