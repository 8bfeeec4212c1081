"""``paircheck fit``: will TARGET (and DRAFT) fit in VRAM at a context? Flags as llama-server's."""

from __future__ import annotations

import sys

import click

from paircheck._format import render
from paircheck.api._fit import DraftOptions, FitOptions, fit_memory
from paircheck.cli.options import render_options
from paircheck.errors import InputError

EXIT_OK, EXIT_DOES_NOT_FIT = 0, 1


def _flash_attn(value: str) -> bool:
    if value not in ("on", "off", "auto"):
        raise InputError("--flash-attn", f"expected on, off or auto, got {value!r}")
    # auto: llama.cpp enables it when the device runs the FA kernel (CPU, CUDA, Metal, Vulkan do)
    return value != "off"


@click.command(
    "fit", epilog="Exit codes: 0 fits (or no --vram given), 1 does not fit --vram, 2 an input could not be read."
)
@click.argument("target")
@click.argument("draft", required=False)
@click.option("-c", "--ctx", "--ctx-size", "ctx", type=int, required=True, help="Context size (llama-server -c).")
@click.option("--vram", default=None,
              help="Device memory budget, e.g. 24GiB, 24G, 8192MiB, 24GB; a bare number is GiB "
              "(default: the --gpu row's memory, else the free memory nvidia-smi, rocm-smi or system_profiler "
              "reports here).")
@click.option("--gpu", "gpu", default=None, help="A GPU or Apple chip from `paircheck gpus`: its memory is the budget.")
@click.option(
    "-ngl",
    "--ngl",
    "--gpu-layers",
    "--n-gpu-layers",
    "ngl",
    type=int,
    default=-1,
    show_default=True,
    help="Target layers on the device; below 0: all (as llama.cpp).",
)
@click.option(
    "-ngld",
    "--ngld",
    "--gpu-layers-draft",
    "--n-gpu-layers-draft",
    "ngld",
    type=int,
    default=-1,
    show_default=True,
    help="Draft layers on the device; below 0: all.",
)
@click.option(
    "-cd",
    "--ctx-draft",
    "--ctx-size-draft",
    "ctx_draft",
    type=int,
    default=None,
    help="Draft context (default: the target's, as llama-server gives it).",
)
@click.option("-ctk", "--cache-type-k", "cache_type_k", default="f16", show_default=True, help="K cache type.")
@click.option("-ctv", "--cache-type-v", "cache_type_v", default="f16", show_default=True, help="V cache type.")
@click.option(
    "-ctkd", "--cache-type-k-draft", "cache_type_k_draft", default="f16", show_default=True, help="Draft K cache type."
)
@click.option(
    "-ctvd", "--cache-type-v-draft", "cache_type_v_draft", default="f16", show_default=True, help="Draft V cache type."
)
@click.option(
    "-np",
    "--parallel",
    "parallel",
    type=int,
    default=-1,
    show_default=True,
    help="Parallel sequences; -1 is llama-server's auto (4 slots, unified KV cache).",
)
@click.option("-kvu", "--kv-unified", "kv_unified", is_flag=True, help="One KV cache shared by all sequences.")
@click.option(
    "-ub", "--ubatch", "--ubatch-size", "ubatch", type=int, default=512, show_default=True, help="Physical batch size."
)
@click.option("-b", "--batch-size", "batch", type=int, default=2048, show_default=True, help="Logical batch size.")
@click.option("-fa", "--flash-attn", "flash_attn", default="auto", show_default=True, help="on, off or auto.")
@click.option("--swa-full", "swa_full", is_flag=True, help="Full-size cache for sliding-window layers.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON (schema paircheck.fit/1).")
def fit_cmd(
    target: str,
    draft: str | None,
    ctx: int,
    vram: str | None,
    ngl: int,
    ngld: int,
    ctx_draft: int | None,
    cache_type_k: str,
    cache_type_v: str,
    cache_type_k_draft: str,
    cache_type_v_draft: str,
    parallel: int,
    kv_unified: bool,
    ubatch: int,
    batch: int,
    flash_attn: str,
    swa_full: bool,
    gpu: str | None,
    as_json: bool,
) -> None:
    """Memory of TARGET (and DRAFT) at a context, against a VRAM budget, as llama.cpp allocates it."""
    opts = FitOptions(ctx=ctx, ngl=ngl, cache_type_k=cache_type_k, cache_type_v=cache_type_v, parallel=parallel,
                      kv_unified=kv_unified, ubatch=ubatch, batch=batch, flash_attn=_flash_attn(flash_attn),
                      swa_full=swa_full)
    dopts = DraftOptions(ngl=ngld, ctx=ctx_draft, cache_type_k=cache_type_k_draft, cache_type_v=cache_type_v_draft)
    result = fit_memory(target, draft, opts, dopts, vram=vram, gpu=gpu, detect=True)
    click.echo(render("json" if as_json else "text", result, render_options()))
    sys.exit(EXIT_DOES_NOT_FIT if result.fits is False else EXIT_OK)
