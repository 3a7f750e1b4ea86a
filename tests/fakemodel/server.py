"""A scripted OpenAI-compatible model server on 127.0.0.1, for recording what agent CLIs write.

Agent CLIs only show their on-disk formats (and what history they replay on resume) when a
model answers them. This server answers from a scenario file instead of a model, one scripted
response per chat request, so every session is reproducible, and it logs each request body so
the replayed history is evidence too. It can also fail on cue (HTTP error, a connection dropped
mid-stream, a hang) to record what a CLI persists when the upstream breaks.

Standard library only; it binds loopback and nothing else. See README.md beside it.
"""

from __future__ import annotations

import argparse
import itertools
import json
import select
import socket
import struct
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

HOST = "127.0.0.1"  # never anything else: this server must not be reachable from outside
DEFAULT_MODEL = "fake-model"


class Scenario:
    """The scripted responses, handed out in request order; thread-safe."""

    def __init__(self, spec: Any) -> None:
        if isinstance(spec, list):
            spec = {"responses": spec}
        if not isinstance(spec, dict) or not isinstance(spec.get("responses", []), list):
            raise ValueError("a scenario is a list of responses or {'responses': [...], ...}")
        self.responses: list[dict[str, Any]] = list(spec.get("responses", []))
        self.on_exhausted: dict[str, Any] = spec.get(
            "on_exhausted",
            {"status": 500, "error": "fakemodel: scenario exhausted (no scripted response left)"},
        )
        self.models: list[str] = list(spec.get("models", [DEFAULT_MODEL]))
        self.chunk_size: int = int(spec.get("chunk_size", 8))
        self._next = 0
        self._lock = threading.Lock()

    @classmethod
    def load(cls, path: str | Path) -> Scenario:
        return cls(json.loads(Path(path).read_text(encoding="utf-8")))

    def take(self) -> tuple[int | None, dict[str, Any]]:
        """The next response and its index in the script (None once the script is used up)."""
        with self._lock:
            if self._next < len(self.responses):
                index = self._next
                self._next += 1
                return index, self.responses[index]
            return None, self.on_exhausted


class RequestLog:
    """Appends one JSON line per request (method, path, body, which scripted response served it)."""

    def __init__(self, path: str | Path | None) -> None:
        self.path = Path(path) if path else None
        self._lock = threading.Lock()
        self._seq = itertools.count(1)

    def write(self, entry: dict[str, Any]) -> None:
        with self._lock:
            entry = {"seq": next(self._seq), "time": time.time(), **entry}
            if self.path is not None:
                with self.path.open("a", encoding="utf-8") as f:
                    f.write(json.dumps(entry, ensure_ascii=False) + "\n")


class FakeModelServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, scenario: Scenario, log: RequestLog, port: int = 0) -> None:
        self.scenario = scenario
        self.log = log
        self.stopping = threading.Event()
        self._ids = itertools.count(1)
        super().__init__((HOST, port), Handler)

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}/v1"

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A dropped or abandoned connection is a scripted outcome, not a server fault.
        if not isinstance(sys.exc_info()[1], (ConnectionError, BrokenPipeError, TimeoutError)):
            super().handle_error(request, client_address)

    def new_id(self) -> int:
        return next(self._ids)

    def start(self) -> threading.Thread:
        thread = threading.Thread(target=self.serve_forever, name="fakemodel", daemon=True)
        thread.start()
        return thread

    def stop(self) -> None:
        self.stopping.set()
        self.shutdown()
        self.server_close()


def _split(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or []


def _arguments_text(arguments: Any) -> str:
    # A string is sent verbatim (so a scenario can script malformed JSON arguments).
    return arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)


def _tool_calls(response: dict[str, Any], server: FakeModelServer) -> list[dict[str, Any]]:
    calls = []
    for call in response.get("tool_calls", []):
        calls.append(
            {
                "id": call.get("id") or f"call_{server.new_id()}",
                "type": "function",
                "function": {"name": call["name"], "arguments": _arguments_text(call.get("arguments", {}))},
            }
        )
    return calls


def _usage(response: dict[str, Any]) -> dict[str, int]:
    usage = response.get("usage", {"prompt_tokens": 100, "completion_tokens": 10})
    return {**usage, "total_tokens": usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0)}


def _finish_reason(response: dict[str, Any]) -> str:
    default = "tool_calls" if response.get("tool_calls") else "stop"
    return str(response.get("finish_reason", default))


def stream_events(
    response: dict[str, Any], server: FakeModelServer, model: str, include_usage: bool
) -> Iterator[dict[str, Any]]:
    """The chat.completion.chunk objects of one streamed response, in OpenAI's order."""
    size = int(response.get("chunk_size", server.scenario.chunk_size))
    base = {
        "id": f"chatcmpl-{server.new_id()}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    yield chunk({"role": "assistant", "content": ""})
    for piece in _split(response.get("reasoning", ""), size):
        yield chunk({"reasoning_content": piece})
    for piece in _split(response.get("text", ""), size):
        yield chunk({"content": piece})
    for index, call in enumerate(_tool_calls(response, server)):
        head = {
            "index": index,
            "id": call["id"],
            "type": "function",
            "function": {"name": call["function"]["name"], "arguments": ""},
        }
        yield chunk({"tool_calls": [head]})
        for piece in _split(call["function"]["arguments"], size):
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    final = chunk({}, _finish_reason(response))
    if include_usage:
        yield final
        yield {**base, "choices": [], "usage": _usage(response)}
    else:
        yield {**final, "usage": _usage(response)}


def completion(response: dict[str, Any], server: FakeModelServer, model: str) -> dict[str, Any]:
    """A whole (non-streamed) chat.completion object."""
    message: dict[str, Any] = {"role": "assistant", "content": response.get("text") or None}
    if response.get("reasoning"):
        message["reasoning_content"] = response["reasoning"]
    calls = _tool_calls(response, server)
    if calls:
        message["tool_calls"] = calls
    return {
        "id": f"chatcmpl-{server.new_id()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": _finish_reason(response)}],
        "usage": _usage(response),
    }


class Handler(BaseHTTPRequestHandler):
    server: FakeModelServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # the JSONL log is the record
        pass

    # --- routing -------------------------------------------------------------------------
    def do_GET(self) -> None:
        self._log(None, None, None)
        if self.path.rstrip("/").endswith("/models"):
            data = [
                {"id": m, "object": "model", "created": 0, "owned_by": "fakemodel"}
                for m in self.server.scenario.models
            ]
            self._json(200, {"object": "list", "data": data})
        else:
            self._json(
                404, {"error": {"message": f"fakemodel: no route GET {self.path}", "type": "not_found"}}
            )

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        if not self.path.split("?")[0].rstrip("/").endswith("/chat/completions"):
            self._log(body, None, None)
            self._json(
                404, {"error": {"message": f"fakemodel: no route POST {self.path}", "type": "not_found"}}
            )
            return
        index, response = self.server.scenario.take()
        self._log(body, index, response)
        if not isinstance(body, dict):
            self._json(
                400,
                {
                    "error": {
                        "message": "fakemodel: body is not a JSON object",
                        "type": "invalid_request_error",
                    }
                },
            )
            return
        self._answer(response, body)

    # --- answering -----------------------------------------------------------------------
    def _answer(self, response: dict[str, Any], body: dict[str, Any]) -> None:
        if response.get("delay_before"):
            time.sleep(float(response["delay_before"]))
        if response.get("hang"):
            self._hang()
            return
        if "status" in response:
            error = response.get("body") or {
                "error": {
                    "message": response.get("error", "fakemodel: scripted failure"),
                    "type": "server_error",
                    "code": None,
                }
            }
            self._json(int(response["status"]), error)
            return
        model = str(body.get("model") or DEFAULT_MODEL)
        if not body.get("stream"):
            if "drop_after" in response:
                self._drop()
                return
            self._json(200, completion(response, self.server, model))
            return
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        delay = float(response.get("delay", 0))
        drop_after = response.get("drop_after")
        hang_after = response.get("hang_after")
        for sent, event in enumerate(stream_events(response, self.server, model, include_usage)):
            if drop_after is not None and sent >= int(drop_after):
                self._drop()
                return
            if hang_after is not None and sent >= int(hang_after):
                self._hang()
                return
            self._chunk(f"data: {json.dumps(event, ensure_ascii=False)}\n\n".encode())
            if delay:
                time.sleep(delay)
        self._chunk(b"data: [DONE]\n\n")
        self._chunk(b"")  # the terminating zero-length chunk

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _json(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _drop(self) -> None:
        """Close the TCP connection abruptly, as an upstream that died mid-response does."""
        self.wfile.flush()
        self.close_connection = True
        try:
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # RST
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _hang(self) -> None:
        """Send nothing more until the client goes away or the server stops."""
        self.close_connection = True
        while not self.server.stopping.is_set():
            readable, _, _ = select.select([self.connection], [], [], 0.2)
            if readable:
                try:
                    if not self.connection.recv(1, socket.MSG_PEEK):
                        return  # the client closed its end
                except OSError:
                    return

    def _log(self, body: Any, index: int | None, response: dict[str, Any] | None) -> None:
        headers = {
            k: ("<redacted>" if k.lower() in {"authorization", "x-api-key", "api-key"} else v)
            for k, v in self.headers.items()
        }
        self.server.log.write(
            {
                "method": self.command,
                "path": self.path,
                "headers": headers,
                "body": body,
                "response_index": index,
                "response": response,
            }
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Scripted OpenAI-compatible model server on 127.0.0.1.")
    parser.add_argument(
        "--script", required=True, help="scenario JSON: a list of responses consumed in order"
    )
    parser.add_argument("--port", type=int, default=0, help="TCP port on 127.0.0.1 (0: any free port)")
    parser.add_argument("--log", help="append every request as one JSON line to this file")
    parser.add_argument("--port-file", help="write the bound port to this file once listening")
    args = parser.parse_args(argv)
    server = FakeModelServer(Scenario.load(args.script), RequestLog(args.log), args.port)
    if args.port_file:
        Path(args.port_file).write_text(f"{server.port}\n", encoding="utf-8")
    print(f"fakemodel listening on {server.base_url}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.stopping.set()
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
