"""Terminal rendering shared by the commands."""

from __future__ import annotations


def human_size(n: float) -> str:
    """Bytes as ``512 B``, ``1.5 KiB`` ... ``3.2 GiB``."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)
