"""Target + draft against a VRAM budget: the verdict, the largest context, the advice."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from paircheck.fit.memory import FitOptions, MiB, ModelMemory, Sizer

SCHEMA = "paircheck.fit/1"
# llama.cpp's --fit keeps this much device memory free (common/arg.cpp, fit_params_target)
FIT_MARGIN = 1024 * MiB


@dataclass(frozen=True)
class DraftOptions:
    """The draft's own flags (llama-server: -ngld, -ctkd, -ctvd); its context follows the
    target's (common/speculative.cpp: ``cparams.n_ctx = llama_n_ctx(ctx_tgt)``)."""

    ngl: int = -1
    ctx: int | None = None  # None: the target's padded n_ctx
    cache_type_k: str = "f16"
    cache_type_v: str = "f16"
    n_max: int = 3  # --spec-draft-n-max (common/common.h: n_max = 3): tokens drafted per step


@dataclass
class FitResult:
    target: ModelMemory
    draft: ModelMemory | None
    vram_bytes: int | None
    max_ctx_that_fits: int | None
    advice: list[str] = field(default_factory=list)
    ctx_search_limit: int | None = None  # the search stops at the training context (or --ctx if larger)
    # The largest context that leaves FIT_MARGIN free, as llama.cpp's --fit aims to: what
    # the advice offers (the bare largest fits with almost nothing to spare).
    advised_ctx: int | None = None
    # Where the budget comes from when it is not --vram: a GPU table row (--gpu) or what this
    # machine's nvidia-smi, rocm-smi or system_profiler reported.
    device: str | None = None

    @property
    def total_device_bytes(self) -> int:
        return self.target.device_bytes + (self.draft.device_bytes if self.draft else 0)

    @property
    def total_host_bytes(self) -> int:
        return self.target.host_bytes + (self.draft.host_bytes if self.draft else 0)

    @property
    def fits(self) -> bool | None:
        return None if self.vram_bytes is None else self.total_device_bytes <= self.vram_bytes

    @property
    def margin_bytes(self) -> int | None:
        return None if self.vram_bytes is None else self.vram_bytes - self.total_device_bytes

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "target": self.target.to_json(),
            "draft": self.draft.to_json() if self.draft else None,
            "total_device_bytes": self.total_device_bytes,
            "total_host_bytes": self.total_host_bytes,
            "vram_bytes": self.vram_bytes,
            "fits": self.fits,
            "margin_bytes": self.margin_bytes,
            "max_ctx_that_fits": self.max_ctx_that_fits,
            "advised_ctx": self.advised_ctx,
            "fit_margin_bytes": FIT_MARGIN,
            "ctx_search_limit": self.ctx_search_limit,
            "advice": list(self.advice),
            "device": self.device,
        }


def _pair(
    target_meta: Sizer, draft_meta: Sizer | None, opts: FitOptions, dopts: DraftOptions
) -> tuple[ModelMemory, ModelMemory | None]:
    t_opts = opts
    if opts.n_outputs is None and draft_meta is not None:
        # llama-server: the target verifies one token plus the draft's per slot
        t_opts = dataclasses.replace(opts, n_outputs=opts.n_seq_max * (1 + max(0, dopts.n_max)))
    target = target_meta.memory(t_opts)
    draft = None
    if draft_meta is not None:
        d = dataclasses.replace(
            opts,
            ctx=dopts.ctx or target.n_ctx,
            ngl=dopts.ngl,
            cache_type_k=dopts.cache_type_k,
            cache_type_v=dopts.cache_type_v,
        )
        draft = draft_meta.memory(d)
    return target, draft


def _device(target_meta: Sizer, draft_meta: Sizer | None, opts: FitOptions, dopts: DraftOptions) -> int:
    t, d = _pair(target_meta, draft_meta, opts, dopts)
    return t.device_bytes + (d.device_bytes if d else 0)


def max_ctx(
    target_meta: Sizer, draft_meta: Sizer | None, opts: FitOptions, dopts: DraftOptions, vram: int, limit: int
) -> int:
    """The largest context (a multiple of 256, up to ``limit``) whose device total fits."""
    step = 256
    lo, hi = 0, max(limit, step) // step  # in steps; lo fits (0 = nothing fits)
    if _device(target_meta, draft_meta, dataclasses.replace(opts, ctx=step), dopts) > vram:
        return 0
    lo = 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if _device(target_meta, draft_meta, dataclasses.replace(opts, ctx=mid * step), dopts) <= vram:
            lo = mid
        else:
            hi = mid - 1
    return lo * step


def _mib(n: int) -> str:
    return f"{n / MiB:,.0f} MiB"


def _largest(n: int, fits: Callable[[int], bool]) -> int | None:
    """The largest k in 0..n with fits(k), for a fits() that is true below some k."""
    if not fits(0):
        return None
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


def _advice(
    result: FitResult, target_meta: Sizer, draft_meta: Sizer | None, opts: FitOptions, dopts: DraftOptions
) -> list[str]:
    vram = result.vram_bytes
    if vram is None:
        return []
    out: list[str] = []
    if result.fits:
        if result.margin_bytes is not None and result.margin_bytes < FIT_MARGIN:
            out.append(
                f"fits with {_mib(result.margin_bytes)} to spare; llama-server's --fit (on by default) aims to leave "
                f"{_mib(FIT_MARGIN)} free and may shrink the context or offload fewer layers"
            )
        return out
    over = -(result.margin_bytes or 0)
    out.append(f"needs {_mib(over)} more than --vram")
    # Every way out below leaves llama.cpp's own margin free: advice that fits with 17 MiB to
    # spare is advice --fit then undoes. None fits so: no advice of that kind.
    vram -= FIT_MARGIN
    if result.advised_ctx:
        out.append(f"-c {result.advised_ctx} fits with {_mib(FIT_MARGIN)} free, the margin llama-server's --fit "
                   f"keeps (context is {result.target.n_ctx})")
    if opts.cache_type_k == "f16" and opts.cache_type_v == "f16":
        q = dataclasses.replace(opts, cache_type_k="q8_0", cache_type_v="q8_0")
        qd = dataclasses.replace(dopts, cache_type_k="q8_0", cache_type_v="q8_0")
        if _device(target_meta, draft_meta, q, dopts) <= vram:
            out.append("-ctk q8_0 -ctv q8_0 (a quantized KV cache) fits")
        elif draft_meta is not None and _device(target_meta, draft_meta, q, qd) <= vram:
            out.append("-ctk q8_0 -ctv q8_0 -ctkd q8_0 -ctvd q8_0 (quantized KV caches) fits")
    if result.draft is not None and result.draft.device_bytes:
        n_layer = result.draft.n_layer
        ngld = _largest(
            n_layer + 1, lambda k: _device(target_meta, draft_meta, opts, dataclasses.replace(dopts, ngl=k)) <= vram
        )
        if ngld is not None:
            out.append(f"-ngld {ngld} (draft layers on the GPU: {ngld} of {n_layer + 1}) fits")
        without = result.total_device_bytes - result.draft.device_bytes
        if without <= vram:
            out.append(f"without the draft the target fits ({_mib(without)}): a smaller draft may")
    n_layer = result.target.n_layer
    ngl = _largest(
        n_layer + 1, lambda k: _device(target_meta, draft_meta, dataclasses.replace(opts, ngl=k), dopts) <= vram
    )
    if ngl is not None:
        out.append(f"-ngl {ngl} fits (the rest of the target runs on the CPU, slower)")
    return out


def fit(
    target_meta: Any,
    draft_meta: Any | None,
    opts: FitOptions,
    dopts: DraftOptions | None = None,
    vram: int | None = None,
    names: tuple[str, str] = ("target", "draft"),
) -> FitResult:
    """Memory of TARGET (+ DRAFT) with these options; against ``vram`` when given."""
    dopts = dopts or DraftOptions()
    t_sizer = Sizer(target_meta, names[0])
    d_sizer = Sizer(draft_meta, names[1]) if draft_meta is not None else None
    target, draft = _pair(t_sizer, d_sizer, opts, dopts)
    largest = limit = advised = None
    if vram is not None:
        limit = max(t_sizer.hp.n_ctx_train, opts.ctx)
        largest = max_ctx(t_sizer, d_sizer, opts, dopts, vram, limit)
        advised = max_ctx(t_sizer, d_sizer, opts, dopts, vram - FIT_MARGIN, limit) if vram > FIT_MARGIN else 0
    result = FitResult(target, draft, vram, largest, ctx_search_limit=limit, advised_ctx=advised)
    result.advice = _advice(result, t_sizer, d_sizer, opts, dopts)
    return result
