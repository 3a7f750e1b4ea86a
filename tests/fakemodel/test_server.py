"""The fake model server speaks the OpenAI wire format the recorded CLIs parse, and fails on cue."""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fakemodel.server import FakeModelServer, RequestLog, Scenario

SERVER_PY = Path(__file__).parent / "server.py"


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Any]:
    servers: list[FakeModelServer] = []

    def start(script: Any) -> FakeModelServer:
        server = FakeModelServer(Scenario(script), RequestLog(tmp_path / "requests.jsonl"))
        server.start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


def post(server: FakeModelServer, body: dict[str, Any]) -> http.client.HTTPResponse:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    conn.request("POST", "/v1/chat/completions", json.dumps(body), {"Content-Type": "application/json"})
    return conn.getresponse()


def sse_events(raw: bytes) -> list[Any]:
    lines = [line for line in raw.decode().split("\n") if line.startswith("data: ")]
    return [
        line[len("data: ") :] if line == "data: [DONE]" else json.loads(line[len("data: ") :])
        for line in lines
    ]


def test_streamed_parallel_tool_calls_reassemble(serve: Any, tmp_path: Path) -> None:
    server = serve(
        [
            {
                "text": "Two tools.",
                "tool_calls": [
                    {"id": "Shell:0", "name": "Shell", "arguments": {"command": "echo hi"}},
                    {"name": "ReadFile", "arguments": {"path": "notes.txt"}},
                ],
            }
        ]
    )
    response = post(
        server,
        {
            "model": "m",
            "stream": True,
            "stream_options": {"include_usage": True},
            "messages": [{"role": "user", "content": "go"}],
        },
    )
    assert response.status == 200
    assert response.getheader("Content-Type") == "text/event-stream"
    events = sse_events(response.read())
    assert events[-1] == "[DONE]"
    chunks = events[:-1]
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    calls: dict[int, dict[str, str]] = {}
    for c in chunks:
        for delta in (c["choices"][0]["delta"].get("tool_calls") or []) if c["choices"] else []:
            call = calls.setdefault(delta["index"], {"id": "", "name": "", "arguments": ""})
            call["id"] += delta.get("id", "")
            call["name"] += delta.get("function", {}).get("name", "")
            call["arguments"] += delta.get("function", {}).get("arguments", "")
    assert text == "Two tools."
    assert calls[0] == {"id": "Shell:0", "name": "Shell", "arguments": '{"command": "echo hi"}'}
    assert calls[1]["name"] == "ReadFile" and json.loads(calls[1]["arguments"]) == {"path": "notes.txt"}
    assert calls[1]["id"].startswith("call_")
    assert [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]][-1] == "tool_calls"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["total_tokens"] == 110
    (logged,) = [json.loads(line) for line in (tmp_path / "requests.jsonl").read_text().splitlines()]
    assert logged["body"]["messages"] == [{"role": "user", "content": "go"}]
    assert logged["response_index"] == 0


def test_scripted_500_then_plain_completion_then_exhausted(serve: Any) -> None:
    server = serve([{"status": 500, "error": "boom"}, {"text": "ok"}])
    first = post(server, {"model": "m", "messages": []})
    assert first.status == 500
    assert json.loads(first.read())["error"]["message"] == "boom"
    second = post(server, {"model": "m", "messages": []})
    assert second.status == 200
    message = json.loads(second.read())["choices"][0]["message"]
    assert message == {"role": "assistant", "content": "ok"}
    third = post(server, {"model": "m", "messages": []})
    assert third.status == 500
    assert "scenario exhausted" in json.loads(third.read())["error"]["message"]


def test_dropped_stream_is_an_incomplete_read(serve: Any) -> None:
    server = serve([{"text": "abcdefghijklmnop", "chunk_size": 4, "drop_after": 2}])
    response = post(server, {"model": "m", "stream": True, "messages": []})
    assert response.status == 200
    with pytest.raises((http.client.IncompleteRead, ConnectionError)):
        response.read()


def test_models_and_command_line(tmp_path: Path) -> None:
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"responses": [], "models": ["m1"]}))
    port_file = tmp_path / "port"
    proc = subprocess.Popen(
        [sys.executable, str(SERVER_PY), "--script", str(script), "--port-file", str(port_file)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().startswith("fakemodel listening on http://127.0.0.1:")
        conn = http.client.HTTPConnection("127.0.0.1", int(port_file.read_text()), timeout=10)
        conn.request("GET", "/v1/models")
        assert [m["id"] for m in json.loads(conn.getresponse().read())["data"]] == ["m1"]
    finally:
        proc.terminate()
        proc.wait(timeout=10)
