"""Sylk contacts no one: onnxruntime, which runs the embedding model, sends usage
telemetry to Microsoft from a thread of its own a moment after its first session (on
Linux too) unless ORT_DISABLE_TELEMETRY is set before it loads; importing Sylk sets it.

A child process embeds with Sylk's packaged model behind a recording HTTPS proxy. The
same child with the setting taken away before onnxruntime loads shows that the proxy
sees the telemetry (so the test can fail); with Sylk's setting, nothing arrives while
the child stays up long after the embedding."""

from __future__ import annotations

import http.server
import os
import socketserver
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import TIMEOUT

CI_VARIABLES = ("CI", "CONTINUOUS_INTEGRATION", "GITHUB_ACTIONS", "TF_BUILD", "BUILD_BUILDID", "GITLAB_CI",
                "JENKINS_URL", "TEAMCITY_VERSION", "BUILDKITE", "CIRCLECI", "TRAVIS")
QUIET_S = 20  # how long the child stays up after embedding: telemetry came within ~3 s when on

CHILD = """
import os, sys, time
from pathlib import Path
import sylk
if sys.argv[1] == "undone":
    os.environ.pop("ORT_DISABLE_TELEMETRY", None)
from sylk.config import EmbeddingSettings
from sylk.embed.loading import load_embedder
embedder, message = load_embedder(EmbeddingSettings(), Path(sys.argv[2]))
assert embedder is not None, message
embedder.embed(["how far apart are two points"])
print("embedded", flush=True)
sys.stdin.read()  # up until the test is done watching
"""


class Recorder(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self) -> None:
        self.seen: list[str] = []
        self.arrived = threading.Event()
        recorder = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_CONNECT(self) -> None:  # noqa: N802 (http.server's name)
                recorder.seen.append(self.path)
                recorder.arrived.set()
                self.send_response(403)
                self.end_headers()

            do_GET = do_POST = do_CONNECT  # noqa: N815

            def log_message(self, *args: object) -> None:
                pass

        super().__init__(("127.0.0.1", 0), Handler)


@pytest.fixture
def proxy() -> Iterator[Recorder]:
    server = Recorder()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def _embed_behind(proxy: Recorder, mode: str, cache: Path) -> subprocess.Popen[str]:
    url = f"http://127.0.0.1:{proxy.server_address[1]}"
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "HF_HUB_OFFLINE": "1"}
    for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        env[name] = url
    # onnxruntime sends nothing where a CI variable is set (.ci/run sets CI): the child is
    # a user's machine
    for name in ("NO_PROXY", "no_proxy", "ORT_DISABLE_TELEMETRY", *CI_VARIABLES):
        env.pop(name, None)
    child = subprocess.Popen([sys.executable, "-c", CHILD, mode, str(cache)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    assert child.stdout is not None
    line = child.stdout.readline()  # (the child's own bound: pytest-timeout)
    assert line.strip() == "embedded", child.communicate(timeout=TIMEOUT)[1]
    return child


def _end(child: subprocess.Popen[str]) -> None:
    child.communicate("", timeout=TIMEOUT)


def test_embedding_sends_nothing_anywhere(proxy: Recorder, tmp_path: Path) -> None:
    child = _embed_behind(proxy, "undone", tmp_path / "cache")
    try:
        # the control: with the setting taken away, onnxruntime's telemetry reaches the proxy
        assert proxy.arrived.wait(TIMEOUT), ("onnxruntime sent nothing even without ORT_DISABLE_TELEMETRY: "
                                             "this test can no longer see its telemetry (has it gone?)")
    finally:
        _end(child)
    proxy.seen.clear()
    proxy.arrived.clear()
    child = _embed_behind(proxy, "sylk", tmp_path / "cache")
    try:
        assert not proxy.arrived.wait(QUIET_S), f"Sylk's embedding contacted {proxy.seen}"
    finally:
        _end(child)
