"""Sylk: local-first code search, served as a language server.

A workspace is data from a stranger, and Sylk is usually started inside one (VS Code
starts the server with the workspace folder as its working directory). Python puts the
working directory first on ``sys.path`` for ``python -m`` and ``python -c``, and every
process Sylk spawns (the parser workers start with ``-c``) would then import a
workspace's ``types.py`` or ``json.py`` instead of the standard library's. So the first
thing importing Sylk does, before any module that is not loaded yet, is:

* ``PYTHONSAFEPATH=1`` for every process Sylk starts (Python's safe-path mode, ``-P``:
  neither the working directory nor a script's folder goes on ``sys.path``);
* when this process itself was started as ``python -m sylk...`` or ``python -c``, the
  working directory Python put first on ``sys.path`` is taken off again (a spawned
  worker receives this ``sys.path`` too).

And no library may phone home: onnxruntime's telemetry is turned off before it loads.

Only ``os`` and ``sys`` are used here: both are loaded before Python reads ``sys.path``.
"""

import os
import sys


def _keep_workspace_off_path() -> None:
    os.environ["PYTHONSAFEPATH"] = "1"
    if sys.flags.safe_path or not sys.path or not sys.argv or sys.argv[0] not in ("-m", "-c"):
        return
    first = sys.path[0]
    try:
        here = os.getcwd()
    except OSError:  # the working directory is gone: '' finds nothing there either
        here = None
    if first == "" or (here is not None and os.path.realpath(first) == os.path.realpath(here)):
        del sys.path[0]


_keep_workspace_off_path()

# onnxruntime (the embedding model's runtime) sends usage telemetry to Microsoft from a
# thread of its own a moment after its first session, on Linux too, unless this is set
# before it loads; ort.disable_telemetry_events() does not stop it. Sylk contacts no one.
os.environ["ORT_DISABLE_TELEMETRY"] = "1"

__version__ = "0.1.0"
# the name to install Sylk by (PyPI's "sylk" is an unrelated project); the command is `sylk`
DISTRIBUTION = "sylk-search"
MCP_INSTALL = (f"pip install '{DISTRIBUTION}[mcp]' (pipx inject {DISTRIBUTION} mcp; "
               f"uv tool install '{DISTRIBUTION}[mcp]')")
