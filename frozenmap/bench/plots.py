"""PNG charts of saved results (matplotlib, imported only when plotting)."""

import os
from typing import Any, Dict, List

from .operations import OPERATIONS
from .timing import Measurement

#: Chart names kept from before the memory rows had a rule of their own.
_LEGACY_NAMES = {"mem_item": "memory-per-item", "mem_version": "memory-per-version"}


def chart_name(op) -> str:
    """The file name (without ``.png``) of ``op``'s chart: ``time-<key>`` for a
    timed operation, ``memory-<what>`` for one measured in bytes."""
    if op.key in _LEGACY_NAMES:
        return _LEGACY_NAMES[op.key]
    if op.unit == "B":
        return "memory-" + (op.key[4:] if op.key.startswith("mem_") else op.key)
    return "time-" + op.key


def write_plots(data: Dict[str, Any], directory: str) -> List[str]:
    """PNG charts, one per operation: each timed operation, memory per item and per version."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    os.makedirs(directory, exist_ok=True)
    results = [Measurement(**m) for m in data["results"]]
    libraries = [lib["name"] for lib in data["meta"]["libraries"]]
    styles = {
        name: dict(
            color="C%d" % i, marker="os^vD<>p"[i % 8], linewidth=2.5 if "frozenmap" in name else 1.2
        )
        for i, name in enumerate(libraries)
    }
    subtitle = "%(python)s, %(cpu)s" % data["meta"]["machine"]

    def draw(ax, op):
        for lib in libraries:
            points = sorted(
                (m.n, m.value) for m in results if m.op == op.key and m.lib == lib and m.value
            )
            if points:
                xs, ys = zip(*points)
                ys = [y * 1e6 for y in ys] if op.unit == "s" else ys
                ax.plot(xs, ys, label=lib, **styles[lib])
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(op.title, fontsize=9)
        ax.set_xlabel("n (items)")
        if op.unit == "B":
            # "memory per item" -> "bytes per item"; other byte counts ("undo
            # history: pickle per version") are just bytes
            ax.set_ylabel("bytes" + op.title.partition("memory")[2])
        else:
            ax.set_ylabel("µs per item" if "per item" in op.title else "µs per operation")
        ax.grid(True, which="major", alpha=0.3)

    written = []
    present = [op for op in OPERATIONS if any(m.op == op.key and m.value for m in results)]

    def save(fig, name):
        path = os.path.join(directory, name)
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)

    for op in present:
        fig, ax = plt.subplots(figsize=(6.4, 4.4))
        draw(ax, op)
        ax.legend(fontsize=8)
        fig.suptitle(subtitle, fontsize=8)
        fig.tight_layout()
        save(fig, chart_name(op) + ".png")
    return written
