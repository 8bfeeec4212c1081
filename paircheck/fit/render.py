"""Text renderings of a fit result: the one-line verdict, the MiB table, the full text."""

from __future__ import annotations

from tabulate import tabulate

from paircheck.fit.memory import ModelMemory
from paircheck.fit.result import FitResult
from paircheck.fit.sizes import format_size


def memory_line(result: FitResult) -> str:
    """The one line for the verdict area (also used by the pair check)."""
    who = "target + draft" if result.draft else "target"
    ctx = f"-c {result.target.n_ctx}"
    need = format_size(result.total_device_bytes)
    if result.vram_bytes is None:
        return f"memory: {who} at {ctx} need {need} on the device, {format_size(result.total_host_bytes)} on the host"
    verdict = "fits" if result.fits else "does not fit"
    margin = result.margin_bytes or 0
    spare = f"{format_size(margin)} to spare" if margin >= 0 else f"{format_size(-margin)} short"
    line = f"memory: {who} at {ctx} {verdict} in {format_size(result.vram_bytes)}: need {need} ({spare})"
    if not result.fits and result.max_ctx_that_fits:
        line += f"; -c {result.max_ctx_that_fits} fits"
    return line


def _cells(mem: ModelMemory | None) -> list[tuple[int, int]]:
    if mem is None:
        return []
    return [
        (mem.weights_device, mem.weights_host),
        (mem.kv_device, mem.kv_host),
        (mem.compute_device, mem.compute_host),
        (mem.device_bytes, mem.host_bytes),
    ]


def render_table(result: FitResult) -> str:
    """MiB per part, target and draft, device and host."""
    parts = ("weights", "KV cache + state", "compute (est.)", "total")
    headers = ["MiB", "target device", "target host"]
    if result.draft:
        headers += ["draft device", "draft host"]
    rows = []
    t, d = _cells(result.target), _cells(result.draft)
    for i, part in enumerate(parts):
        row = [part, f"{t[i][0] / 2**20:,.0f}", f"{t[i][1] / 2**20:,.0f}"]
        if d:
            row += [f"{d[i][0] / 2**20:,.0f}", f"{d[i][1] / 2**20:,.0f}"]
        rows.append(row)
    return tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True, colalign=("left",) + ("right",) * (len(headers) - 1))


def _describe_side(mem: ModelMemory) -> str:
    where = f"{mem.layers_on_device}/{mem.n_layer} layers{' + output' if mem.output_on_device else ''} on the device"
    seqs = f"{mem.n_seq_max} sequence{'s' if mem.n_seq_max > 1 else ''}{' (unified KV)' if mem.kv_unified and mem.n_seq_max > 1 else ''}"
    return f"{mem.name} ({mem.arch}): -c {mem.n_ctx}, {seqs}, {where}"


def render_human(result: FitResult) -> str:
    lines = [memory_line(result), ""]
    lines.append(render_table(result))
    lines.append("")
    for mem in (result.target, result.draft):
        if mem is not None:
            lines.append(_describe_side(mem))
            lines += [f"  note: {n}" for n in mem.notes]
    if result.vram_bytes is not None:
        best = result.max_ctx_that_fits
        capped = " (the model's training context: searched no further)" if best and best >= (result.ctx_search_limit or 0) else ""
        lines.append(f"largest context that fits: {best or 'none'}{capped}")
    for advice in result.advice:
        lines.append(f"  - {advice}")
    return "\n".join(lines)
