"""``paircheck gpus`` for people: one row per device, the sources below."""

from __future__ import annotations

from collections.abc import Sequence

from paircheck._format.text_base import wrap
from paircheck.hardware.detect import Detected
from paircheck.hardware.table import Gpu


def render_gpus(rows: Sequence[Gpu], detected: Detected | None, width: int, full: bool = False) -> str:
    from tabulate import tabulate

    table = [(g.name, f"{g.bandwidth_gbs:g}", f"{g.memory_gib:g}", g.vendor) for g in rows]
    lines = [tabulate(table, headers=("device", "GB/s", "GiB", "vendor"), tablefmt="simple",
                      disable_numparse=True, colalign=("left", "right", "right", "left"))]
    lines.append("")
    if full:
        for g in rows:
            lines += wrap(f"source: {g.source}", width)
            lines += wrap(f"quote: {g.quote}", width)
            if g.aliases:
                lines += wrap(f"also matched as: {', '.join(g.aliases)}", width)
            if g.note:
                lines += wrap(f"note: {g.note}", width)
    else:
        lines += wrap(f"{len(rows)} devices: peak memory bandwidth (GB/s) and memory as sold (GiB), DOCUMENTED by "
                      "each row's source (`paircheck gpus NAME` shows it); --gpu takes any of these names", width)
    if detected is not None:
        if detected.devices:
            for d in detected.devices:
                free = f", {d.free_bytes / 2**30:.1f} GiB free" if d.free_bytes is not None else ""
                lines += wrap(f"detected here by `{detected.command}`: {d.name}, {d.total_bytes / 2**30:.1f} GiB"
                              f"{free}", width)
        else:
            lines += wrap("detected here: no GPU (no nvidia-smi, rocm-smi or system_profiler on PATH"
                          + (f"; {'; '.join(detected.problems)}" if detected.problems else "") + ")", width)
    return "\n".join(lines)
