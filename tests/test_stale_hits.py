"""End to end: a hit on a file that changed since it was indexed (here with the watcher
off, so the index keeps the old text) points where its chunk is now, or says it is
stale; over the language server (0-based ranges) and MCP (1-based lines)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import TIMEOUT, eventually, mcp_session, start_lsp

BILLING = '''import math


def settle_invoice_ledger(total):
    """Round an invoice total down to whole cents."""
    return math.floor(total * 100) / 100


def refund_card_payment(amount):
    return -amount
'''


def project(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    root.mkdir()
    (root / ".sylk.toml").write_text("watch = false\n[embedding]\nenabled = false\n")
    (root / "billing.py").write_text(BILLING)
    return root


def edit(root: Path) -> int:
    """Five lines above settle_invoice_ledger, refund_card_payment renamed; the 0-based
    line of settle_invoice_ledger now."""
    billing = root / "billing.py"
    billing.write_text(BILLING.replace("import math\n", "import math\n" + "".join(
        f"RATE_{i} = {i}\n" for i in range(5)), 1).replace("refund_card_payment", "reverse_card_payment"))
    return billing.read_text().splitlines().index("def settle_invoice_ledger(total):")


async def test_a_moved_hit_is_corrected_and_a_lost_one_marked_stale_over_the_language_server(
        tmp_path: Path, _isolated_index: Path):
    root = project(tmp_path)
    client = await start_lsp(root, _isolated_index, "visual-studio-code", {"watch": False,
                                                                           "embedding": {"enabled": False}})
    try:
        async def search(query: str) -> Any:
            return await client.protocol.send_request_async("sylk/search", {"query": query, "mode": "lexical"})

        before = await eventually(lambda: search("settle_invoice_ledger"), lambda r: bool(r.hits),
                                  "the first index", TIMEOUT)
        assert before.hits[0].range.start.line == 3
        line = edit(root)

        hit = (await search("settle_invoice_ledger")).hits[0]
        assert (hit.symbol, hit.range.start.line, hit.range.end.line) == ("settle_invoice_ledger", line, line + 3)
        assert hit.stale is False and hit.snippet.startswith("def settle_invoice_ledger(total):")
        assert hit.snippetRange.start.line == line
        lost = next(h for h in (await search("refund_card_payment")).hits if h.symbol == "refund_card_payment")
        assert lost.stale is True and lost.snippet == ""
    finally:
        await client.shutdown_session()
        await client.stop()


async def test_a_moved_hit_is_corrected_and_a_lost_one_marked_stale_over_mcp(tmp_path: Path, _isolated_index: Path):
    root = project(tmp_path)
    async with mcp_session(root, _isolated_index) as s:
        async def search(query: str) -> dict[str, Any]:
            result = await s.call_tool("search_code", {"query": query, "mode": "lexical"})
            assert not result.is_error, result.content
            return json.loads(result.content[0].text)  # type: ignore[union-attr]

        await eventually(lambda: search("settle_invoice_ledger"), lambda r: bool(r["hits"]), "the first index")
        line = edit(root) + 1

        hit = (await search("settle_invoice_ledger"))["hits"][0]
        assert (hit["symbol"], hit["startLine"], hit["endLine"]) == ("settle_invoice_ledger", line, line + 2)
        assert "stale" not in hit and hit["snippet"].startswith("def settle_invoice_ledger(total):")
        lost = next(h for h in (await search("refund_card_payment"))["hits"] if h["symbol"] == "refund_card_payment")
        assert lost["stale"] is True and lost["snippet"] == ""
