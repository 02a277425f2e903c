"""A loopback HTTP server that answers like a given LLM API, for contract tests.

Each test queues responses; the server records every request body so tests
can assert what the client library really sent over the wire.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def unused_port() -> int:
    """A loopback port nothing listens on: connecting to it is refused at once."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Canned:
    status: int = 200
    content_type: str = "application/json"
    chunks: Iterable[bytes] = ()


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class FakeLLMServer:
    responses: list[Canned] = field(default_factory=list)
    requests: list[Recorded] = field(default_factory=list)

    def __post_init__(self) -> None:
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b"{}"
                outer.requests.append(
                    Recorded(
                        "POST",
                        self.path,
                        {k.lower(): v for k, v in self.headers.items()},
                        json.loads(raw or b"{}"),
                    )
                )
                canned = (
                    outer.responses.pop(0)
                    if outer.responses
                    else Canned(404, chunks=[b'{"error": "no canned response"}'])
                )
                self.send_response(canned.status)
                self.send_header("Content-Type", canned.content_type)
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for chunk in canned.chunks:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def json(self, payload: dict[str, Any], status: int = 200) -> None:
        self.responses.append(Canned(status, "application/json", [json.dumps(payload).encode()]))

    def sse(self, events: list[dict[str, Any]]) -> None:
        """OpenAI streaming: one `data:` line per chunk, then `data: [DONE]`."""
        chunks = [f"data: {json.dumps(e)}\n\n".encode() for e in events] + [b"data: [DONE]\n\n"]
        self.responses.append(Canned(200, "text/event-stream", chunks))

    def ndjson(self, lines: list[dict[str, Any]]) -> None:
        """Ollama streaming: one JSON object per line."""
        self.responses.append(
            Canned(200, "application/x-ndjson", [(json.dumps(x) + "\n").encode() for x in lines])
        )

    def __enter__(self) -> FakeLLMServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
