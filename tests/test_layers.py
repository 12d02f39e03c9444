"""The core never imports the LSP stack: the seam that keeps the CLI and other front ends thin."""

from __future__ import annotations

import subprocess
import sys


def test_core_imports_without_pygls():
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('pygls', 'lsprotocol'):\n"
        "            raise ImportError('blocked: ' + name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "import sylk.cli, sylk.engine.indexer, sylk.search.symbol_search, sylk.store.lexical, sylk.config, sylk.ingest.scan\n"
        "print('ok')\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"
