"""Memory for people (``paircheck fit``, and the check with ``--ctx``/``--vram``): one line
for the verdict area, a MiB table per part and side, and the advice when it does not fit."""

from __future__ import annotations

from paircheck._format.interface import RenderOptions
from paircheck._format.text_base import wrap
from paircheck.fit.memory import ModelMemory
from paircheck.fit.result import FIT_MARGIN, FitResult
from paircheck.sizes import format_size


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
    if not result.fits and result.advised_ctx:
        line += f"; -c {result.advised_ctx} fits with {format_size(FIT_MARGIN)} free (llama.cpp's --fit margin)"
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


def render_fit_table(result: FitResult) -> str:
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
    from tabulate import tabulate

    align = ("left",) + ("right",) * (len(headers) - 1)
    return str(tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True, colalign=align))


def _describe_side(mem: ModelMemory) -> str:
    where = f"{mem.layers_on_device}/{mem.n_layer} layers{' + output' if mem.output_on_device else ''} on the device"
    unified = " (unified KV)" if mem.kv_unified and mem.n_seq_max > 1 else ""
    seqs = f"{mem.n_seq_max} sequence{'s' if mem.n_seq_max > 1 else ''}{unified}"
    return f"{mem.name} ({mem.arch}): -c {mem.n_ctx}, {seqs}, {where}"


def render_fit(result: FitResult, options: RenderOptions) -> str:
    width = options.width
    lines = [*wrap(memory_line(result), width)]
    if result.device:
        lines += wrap(f"device: {result.device}", width)
    lines += ["", render_fit_table(result)]
    lines.append("")
    for mem in (result.target, result.draft):
        if mem is not None:
            lines += wrap(_describe_side(mem), width)
            for n in mem.notes:
                lines += wrap(f"note: {n}", width, "  ", "  ")
    if result.vram_bytes is not None:
        best = result.max_ctx_that_fits
        limit = result.ctx_search_limit or 0
        capped = " (the model's training context: searched no further)" if best and best >= limit else ""
        advised = (f"; {result.advised_ctx or 'none'} with {format_size(FIT_MARGIN)} free, the margin "
                   "llama-server's --fit keeps")
        lines += wrap(f"largest context that fits: {best or 'none'}{capped}{advised}", width)
    for advice in result.advice:
        lines += wrap(f"- {advice}", width, "  ", "  ")
    return "\n".join(lines)
