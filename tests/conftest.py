"""Fixtures and the helpers every end-to-end test shares: starting `sylk serve --stdio`
and `sylk mcp` as subprocesses, polling a server until it says something, git commits."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

import pytest
from lsprotocol import types
from pygls.uris import from_fs_path
from pytest_lsp import LanguageClient

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
WORKSPACE = FIXTURES / "workspace"


@pytest.fixture(autouse=True)
def _isolated_index(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own cache dir, so no test sees another's index (or the user's),
    and its own (empty) user config folder, so the user's own config file never applies."""
    cache = tmp_path_factory.mktemp("cache")
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("config")))
    monkeypatch.delenv("SYLK_INDEX_DIR", raising=False)
    return cache


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A private copy of the multi-language fixture workspace (tests may edit it)."""
    dest = tmp_path / "workspace"
    shutil.copytree(WORKSPACE, dest, symlinks=True)
    return dest


T = TypeVar("T")
# seconds a server has to say what a test waits for: generous, as on a machine whose cores
# are kept busy by other work the server's background threads (nice +10: indexing, the
# model, embedding) get about a tenth of a core, by design (the embedding of the 16-file
# fixture took over 90 s so, where it takes 3 s on an idle machine)
TIMEOUT = 240.0


def server_env(cache: Path) -> dict[str, str]:
    """The environment of a server subprocess: its own cache, no index folder override."""
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    env.pop("SYLK_INDEX_DIR", None)
    return env


def sylk_command(*args: str, cwd: Path | None = None, console_script: bool = False) -> list[str]:
    """The command line that runs ``sylk ARGS``: ``python -m sylk.cli`` (or, with
    ``console_script``, the installed ``sylk`` script), started in ``cwd`` when given
    (``env -C``: pytest-lsp and the MCP client take no working directory)."""
    exe = [str(Path(sys.executable).parent / "sylk")] if console_script else [sys.executable, "-m", "sylk.cli"]
    return (["env", "-C", str(cwd)] if cwd is not None else []) + exe + list(args)


def run_sylk(*args: str, cache: Path, cwd: Path | None = None, console_script: bool = False,
             env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``sylk ARGS`` as a user runs it in a terminal (in ``cwd``), bounded by TIMEOUT."""
    return subprocess.run(sylk_command(*args, cwd=cwd, console_script=console_script), capture_output=True,
                          text=True, env={**server_env(cache), **(env or {})}, stdin=subprocess.DEVNULL,
                          timeout=TIMEOUT)


async def start_lsp(workspace: Path, cache: Path, spec: str, options: Any = None, *,
                    folders: list[Path] | None = None, configuration: dict[Path, Any] | None = None,
                    result: list[Any] | None = None, cwd: Path | None = None,
                    console_script: bool = False, env: dict[str, str] | None = None) -> Any:
    """`sylk serve --stdio` for ``workspace`` (or the workspace ``folders``), initialized by
    pytest-lsp's client with the recorded capabilities of the editor ``spec``.
    ``configuration``: what the client answers to workspace/configuration for the section
    ``sylk`` with a folder as ``scopeUri`` (folder -> settings). ``result``: gets the
    InitializeResult appended. ``cwd``: the server's working directory (VS Code starts it
    in the workspace folder); ``env``: more environment variables."""
    from lsprotocol import types
    from pygls.uris import from_fs_path
    from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

    config = ClientServerConfig(server_command=sylk_command("serve", "--stdio", cwd=cwd,
                                                            console_script=console_script),
                                server_env={**server_env(cache), **(env or {})})
    client = await config.start()
    assert isinstance(client, LanguageClient)
    roots = folders or [workspace]
    for root, settings in (configuration or {}).items():
        client.set_configuration(settings, section="sylk", scope_uri=from_fs_path(str(root)))
    answer = await client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities(spec),
        root_uri=from_fs_path(str(roots[0])),
        workspace_folders=[types.WorkspaceFolder(uri=from_fs_path(str(r)), name=r.name) for r in roots],
        initialization_options=options,
    ))
    if result is not None:
        result.append(answer)
    return client


@asynccontextmanager
async def mcp_session(workspace: Path, cache: Path, *, cwd: Path | None = None,
                      env: dict[str, str] | None = None, console_script: bool = False,
                      **client: Any) -> AsyncIterator[Any]:
    """`sylk mcp` for ``workspace``, driven by the MCP SDK's own client over stdio (started
    in ``cwd`` when given, with ``env`` added to its environment); ``client``: more
    arguments of its ClientSession (``list_roots_callback``, ...); ``console_script``: the
    installed ``sylk`` script instead of ``python -m sylk.cli``."""
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    command = sylk_command("mcp", str(workspace), console_script=console_script)
    params = StdioServerParameters(command=command[0], args=command[1:], env={**server_env(cache), **(env or {})},
                                   cwd=cwd)
    # Each wait is bounded, not the session: every request gets TIMEOUT for its answer
    # (read_timeout_seconds), the polls their own (mcp_wait_until); pytest-timeout bounds the test.
    client.setdefault("read_timeout_seconds", TIMEOUT)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, **client) as s:
            with anyio.fail_after(TIMEOUT):
                await s.initialize()
            yield s


def without_embedding(root: Path) -> Path:
    """``root`` with a .sylk.toml that turns embedding off (most tests are about words and
    symbols: the model stays off unless asked for); returns ``root``."""
    (root / ".sylk.toml").write_text("[embedding]\nenabled = false\n", encoding="utf-8")
    return root


def mcp_indexed(status: dict[str, Any]) -> bool:
    """An MCP ``get_status`` after the first index run."""
    return status["state"] in ("ready", "embedding") and status.get("lastRun") is not None


async def mcp_call(s: Any, tool: str, **args: Any) -> dict[str, Any]:
    """A tool's answer as an agent reads it (the JSON text), which must not be an error;
    its structured content must say the same."""
    import json

    result = await s.call_tool(tool, args)
    text = result.content[0].text
    assert not result.is_error, text
    data = json.loads(text)
    assert result.structured_content == data
    return data


async def mcp_call_error(s: Any, tool: str, **args: Any) -> str:
    """A tool's answer that must be an error: its text."""
    result = await s.call_tool(tool, args)
    text = result.content[0].text
    assert result.is_error, text
    return text


async def mcp_wait_until(s: Any, done: Callable[[dict[str, Any]], bool], what: str) -> dict[str, Any]:
    """Poll the MCP ``get_status`` until ``done(status)`` (the server's word, never a
    sleep-and-hope); fails naming ``what`` after TIMEOUT."""
    return await eventually(lambda: mcp_call(s, "get_status"), done, what)


async def eventually(probe: Callable[[], Awaitable[T]], done: Callable[[T], bool], what: str,
                     timeout: float = TIMEOUT) -> T:
    """Ask ``probe`` (a status or search request) until ``done(answer)``: the server's
    word, never a sleep-and-hope. Fails naming ``what`` after ``timeout``."""
    async def poll() -> T:
        while True:
            answer = await probe()
            if done(answer):
                return answer
            await asyncio.sleep(0.05)
    try:
        return await asyncio.wait_for(poll(), timeout)
    except TimeoutError:
        pytest.fail(f"timed out waiting for {what}")


def eventually_blocking(probe: Callable[[], T], done: Callable[[T], bool], what: str,
                        timeout: float = TIMEOUT) -> T:
    """``eventually`` for a blocking client (RawLsp): ``probe()`` until ``done(answer)``;
    fails naming ``what`` (and the last answer) after ``timeout``."""
    import time

    deadline = time.monotonic() + timeout
    while True:
        answer = probe()
        if done(answer):
            return answer
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}; the last answer: {answer!r}")
        time.sleep(0.05)


def raw_until(server: RawLsp, method: str, params: Any, done: Callable[[dict[str, Any]], bool], what: str,
              timeout: float = TIMEOUT, ids: str = "poll") -> dict[str, Any]:
    """Send ``method`` to a RawLsp server (ids ``<ids>-1``, ``<ids>-2``, ..., never reused) until
    ``done(answer)``; fails naming ``what`` (and the last answer) after ``timeout``."""
    return eventually_blocking(lambda: server.request(server.new_id(ids), method, params), done, what, timeout)


HOLD_INDEX = "SYLK_HOLD_INDEX"  # the server's test hook (sylk.engine.indexer.HOLD_ENV)


def hold_index(tmp_path: Path, held: bool = True) -> tuple[Path, dict[str, str]]:
    """A hold on a server's index runs, so a test can ask while a run is certainly under
    way: the file that holds them (a run that parses files makes its first one searchable,
    then waits while the file exists; delete it to let the run go on, touch it to hold the
    next) and the environment that gives the server the hook. ``held``: the file is
    created here, so the first run is held too."""
    hold = tmp_path / "hold-index"
    if held:
        hold.touch()
    return hold, {HOLD_INDEX: str(hold)}


def write_tree(root: Path, files: dict[str, str]) -> Path:
    """``files`` (root-relative path -> text, UTF-8) written under ``root``; returns ``root``."""
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return root


def git_commit(root: Path, author: str, message: str, *paths: str, when: str | None = None) -> str:
    """Commit ``paths`` (everything when none) as ``author``; returns the commit's sha."""
    env = {**os.environ, **({"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when} if when else {})}

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(root), "-c", f"user.name={author}", "-c", "user.email=x@y", *args],
                              check=True, capture_output=True, text=True, env=env).stdout

    git("add", *(paths or ("-A",)))
    git("commit", "-qm", message)
    return git("rev-parse", "HEAD").strip()


class RawLsp:
    """`sylk serve --stdio` driven byte by byte (pytest-lsp cannot send a broken frame):
    ``send`` writes raw bytes, ``frame`` a body with its header; a reader thread collects
    every message the server writes, in order, in ``received``."""

    def __init__(self, cache: Path, log: Path, env: dict[str, str] | None = None) -> None:
        import threading

        self._log = open(log, "wb")
        self.process = subprocess.Popen([sys.executable, "-m", "sylk.cli", "serve", "--stdio"],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log,
                                        env={**server_env(cache), **(env or {})})
        self.received: list[dict[str, Any]] = []
        self._arrived = threading.Condition()
        self._ids = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        import json

        out = self.process.stdout
        assert out is not None
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    return
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
                elif line in (b"\r\n", b"\n") and length is not None:
                    break
            body = out.read(length)
            with self._arrived:
                self.received.append(json.loads(body))
                self._arrived.notify_all()

    def new_id(self, prefix: str) -> str:
        """A request id no other request of this server has had."""
        self._ids += 1
        return f"{prefix}-{self._ids}"

    def send(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def frame(self, body: Any) -> bytes:
        """``body`` (JSON data, or bytes as they are) with a correct header, sent."""
        import json

        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        data = b"Content-Length: %d\r\n\r\n" % len(raw) + raw
        self.send(data)
        return data

    def wait_for(self, done: Callable[[list[dict[str, Any]]], bool], what: str) -> list[dict[str, Any]]:
        """Block until ``done(received)`` holds; fail after TIMEOUT seconds."""
        with self._arrived:
            if not self._arrived.wait_for(lambda: done(self.received), timeout=TIMEOUT):
                raise AssertionError(f"timed out waiting for {what}; the server said {self.received[-5:]}")
            return list(self.received)

    def answer(self, msg_id: Any) -> dict[str, Any]:
        """The (first) response to the request ``msg_id``."""
        got = self.wait_for(lambda r: any(m.get("id") == msg_id and "method" not in m for m in r),
                            f"the answer to {msg_id!r}")
        return next(m for m in got if m.get("id") == msg_id and "method" not in m)

    def request(self, msg_id: Any, method: str, params: Any = None) -> dict[str, Any]:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        self.frame(message)
        return self.answer(msg_id)

    def initialize(self, root: Path, options: Any = None) -> dict[str, Any]:
        uri = root.resolve().as_uri()
        answer = self.request("init", "initialize", {
            "processId": None, "rootUri": uri, "capabilities": {},
            "workspaceFolders": [{"uri": uri, "name": root.name}], "initializationOptions": options})
        self.frame({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        return answer

    def close(self) -> int:
        """Stop the server (exit, then kill if it lingers); its return code."""
        if self._log.closed:
            return self.process.wait()
        try:
            self.frame({"jsonrpc": "2.0", "method": "exit"})
            assert self.process.stdin is not None
            self.process.stdin.close()
        except (OSError, ValueError):
            pass
        try:
            code = self.process.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = self.process.wait()
        self._log.close()
        return code


@pytest.fixture
def raw_lsp(tmp_path: Path, _isolated_index: Path) -> Any:
    """A factory of RawLsp servers (``env``: more environment variables), stopped at the
    end of the test."""
    servers: list[RawLsp] = []

    def start(env: dict[str, str] | None = None) -> RawLsp:
        server = RawLsp(_isolated_index, tmp_path / f"server-{len(servers)}.log", env)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.close()


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    """A one-file workspace: greet.py defines hello_world."""
    root = tmp_path / "tiny"
    root.mkdir()
    (root / "greet.py").write_text("def hello_world():\n    return 'hi'\n")
    return root


BINARIES = 300  # the `binaries` workspace's binary files


@pytest.fixture
def binaries(tmp_path: Path) -> Path:
    """A workspace Sylk mostly skips: ``BINARIES`` binary files (``blobs/blob-000.bin`` ...),
    one file over the default size limit (``big.py``) and one indexed file (``app.py``)."""
    root = tmp_path / "binaries"
    (root / "blobs").mkdir(parents=True)
    for i in range(BINARIES):
        (root / "blobs" / f"blob-{i:03d}.bin").write_bytes(b"\x7fELF\x00\x01" + bytes([i % 256]) * 64)
    (root / "big.py").write_text("x = 1\n" * 200_000)  # 1.2 MB
    (root / "app.py").write_text("def serve():\n    return 'ok'\n")
    return root


# -- the language server over stdio, driven by pytest-lsp (shared by the test modules) --

def uri(path: Path) -> str:
    result = from_fs_path(str(path))
    assert result is not None
    return result


# Most tests are about symbols and the lexical side: the model stays off unless asked for.
NO_EMBEDDING = {"embedding": {"enabled": False}}


async def start(workspace: Path, cache: Path, spec: str, options: Any = NO_EMBEDDING) -> LanguageClient:
    return await start_lsp(workspace, cache, spec, options)


INDEXING = "Sylk: Indexing workspace"
EMBEDDING = "Sylk: Embedding"


def progress_ends(client: LanguageClient, title: str = INDEXING) -> list[types.WorkDoneProgressEnd]:
    """The ends of the progress sequences whose begin had ``title``."""
    ends = []
    for reports in list(client.progress_reports.values()):
        if reports and isinstance(reports[0], types.WorkDoneProgressBegin) and reports[0].title == title:
            ends.extend(v for v in reports if isinstance(v, types.WorkDoneProgressEnd))
    return ends


async def wait_for_progress_end(client: LanguageClient, count: int = 1,
                                title: str = INDEXING) -> types.WorkDoneProgressEnd:
    """Wait until ``count`` progress sequences titled ``title`` have ended (the server's
    signal, not a sleep)."""
    async def ended() -> list[types.WorkDoneProgressEnd]:
        while True:
            ends = progress_ends(client, title)
            if len(ends) >= count:
                return ends
            await asyncio.sleep(0.02)

    try:
        ends = await asyncio.wait_for(ended(), TIMEOUT)
    except TimeoutError:
        pytest.fail(f"timed out waiting for {count} end(s) of the progress {title!r}; "
                    f"{len(progress_ends(client, title))} came")
    return ends[-1]


async def symbols(client: LanguageClient, query: str) -> list[types.SymbolInformation]:
    result = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query=query))
    assert result is not None
    return list(result)  # type: ignore[arg-type]


def rel(client: LanguageClient, location_uri: str) -> str:
    root = uri(client.workspace_root)  # type: ignore[attr-defined]
    assert location_uri.startswith(root + "/"), location_uri
    return location_uri[len(root) + 1:]


def _get(obj: Any, key: str) -> Any:
    return obj[key] if isinstance(obj, dict) else getattr(obj, key)


async def status(client: LanguageClient) -> Any:
    return await client.protocol.send_request_async("sylk/status", {})


async def wait_applied(client: LanguageClient, before: int) -> int:
    """Wait until the server has indexed a batch of disk changes after ``before`` and has
    none queued."""
    async def applied() -> int:
        while True:
            st = await status(client)
            w = _get(st, "watch")
            n = _get(w, "changesApplied")
            if n > before and _get(w, "pendingChanges") == 0 and not _get(st, "indexing"):
                return n
            await asyncio.sleep(0.02)
    try:
        return await asyncio.wait_for(applied(), TIMEOUT)
    except TimeoutError:
        pytest.fail(f"timed out waiting for the server to apply the disk changes after batch {before}")


# -- a hostile workspace: modules that write a marker when imported (issue 29) ---------

# Parsed by worker processes: well past the indexer's POOL_THRESHOLD (48) and HEAD_FILES (64).
SOURCE_FILES = 120
# Imported as packages (a folder with __init__.py) rather than as modules.
PACKAGES = {"logging", "encodings", "json", "concurrent", "importlib", "multiprocessing", "email", "xml",
            "collections", "asyncio", "sqlite3", "unittest"}


def runpy_startup_modules() -> set[str]:
    """The modules CPython itself imports for ``python -m`` before any code of the module
    run: found on the working directory first, a workspace shadows them before Sylk's
    first line runs (only the console script or ``-P`` avoids that), so the ``python -m``
    case leaves them out."""
    code = "import runpy, sys; print(' '.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, check=True,
                         timeout=TIMEOUT).stdout
    return {name.partition(".")[0] for name in out.split()}


def hostile_workspace(root: Path, markers: Path, leave_out: set[str] = frozenset()) -> int:
    """``root`` filled with a marker module per standard-library module (but ``leave_out``)
    and SOURCE_FILES plain files of equal mtime; returns how many files it holds."""
    markers.mkdir(parents=True, exist_ok=True)
    names = {n for n in sys.stdlib_module_names if n.isidentifier()} | {"sitecustomize", "usercustomize"}
    count = 0
    for name in sorted(names - leave_out):
        body = (f"import os as _os\nopen({str(markers)!r} + '/{name}-' + str(_os.getpid()), 'w').close()\n"
                f"def marker_{name}():\n    return {name!r}\n")
        path = root / name / "__init__.py" if name in PACKAGES else root / f"{name}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body, encoding="utf-8")
        count += 1
    for i in range(SOURCE_FILES):
        (root / f"src_{i:03d}.py").write_text(f"def source_function_{i:03d}(x):\n    return x + {i}\n",
                                             encoding="utf-8")
        count += 1
    without_embedding(root)  # .sylk.toml: one more file, indexed as config
    return count + 1


def fired(markers: Path) -> list[str]:
    """The markers written: the names of the modules some process imported."""
    return sorted(p.name for p in markers.iterdir())


# --- no silent skip in CI ------------------------------------------------------------------
# A skipped test is a test that did not run: where the CI variable is set (.ci/run sets it,
# as CI services do), the run fails when any test was skipped, after printing why (-rs).


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    skipped = terminalreporter.stats.get("skipped", [])
    if skipped and os.environ.get("CI", "").lower() not in ("", "0", "false"):
        terminalreporter.write_line(f"CI: {len(skipped)} test(s) skipped (see the SKIPPED lines); a skip fails CI: "
                                    "install what they need (see the README's set-up)", red=True)
        terminalreporter._session.exitstatus = pytest.ExitCode.TESTS_FAILED
