"""Memory of one model at a context, the way llama.cpp allocates it.

Three parts, as llama.cpp's memory breakdown names them (``llama_memory_breakdown_print``):
``model`` (weights), ``context`` (KV cache plus recurrent state) and ``compute`` (the
scheduler's graph buffers). Each is split between the device (what ``-ngl`` offloads) and
the host. Sources are cited where each rule is applied; all at the pinned llama.cpp.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from paircheck.errors import InputError
from paircheck.fit.compute import compute_bytes
from paircheck.fit.ggml_types import block_and_size, cache_type, row_size, tensor_bytes
from paircheck.fit.hparams import Hparams, read_hparams

MiB = 1024 * 1024
_LAYER = re.compile(r"^blk\.(\d+)\.")
# Tensors of llama.cpp's "input layer", always kept on the CPU (llama-model.cpp load_tensors:
# "there is very little benefit to offloading the input layer").
_INPUT = ("token_embd.", "token_types.", "position_embd.", "per_layer_token_embd.")


def pad(value: int, to: int) -> int:
    """GGML_PAD."""
    return (value + to - 1) // to * to


@dataclass(frozen=True)
class FitOptions:
    """llama-server's flags that change memory, with its defaults."""

    ctx: int
    ngl: int = -1  # -ngl; below 0: every layer (llama_model::n_gpu_layers)
    cache_type_k: str = "f16"
    cache_type_v: str = "f16"
    parallel: int = -1  # -np; -1 is llama-server's "auto": 4 slots sharing one unified KV cache
    kv_unified: bool = False  # -kvu; implied by parallel = -1
    ubatch: int = 512  # -ub
    batch: int = 2048  # -b
    flash_attn: bool = True  # -fa auto resolves to on where the backend supports it (CPU, CUDA, Metal)
    swa_full: bool = False  # --swa-full
    # the context's n_outputs_max: None is llama-server's (one per slot, plus the draft
    # length when a draft verifies: tools/server/server-context.cpp server_output_limits);
    # 0 is llama.cpp's context default (n_batch), which llama-fit-params uses
    n_outputs: int | None = None

    @property
    def n_seq_max(self) -> int:
        return 4 if self.parallel < 0 else max(1, self.parallel)

    @property
    def unified(self) -> bool:
        return self.parallel < 0 or self.kv_unified

    @property
    def n_ubatch(self) -> int:
        # llama_context: n_ubatch = min(n_batch, n_ubatch)
        return min(self.batch, self.ubatch)


@dataclass
class ModelMemory:
    """Bytes of one model, by part and by where llama.cpp puts them."""

    name: str
    arch: str
    n_layer: int
    layers_on_device: int  # repeating layers offloaded (the output layer counts separately)
    output_on_device: bool
    n_ctx: int  # after llama.cpp's padding
    n_seq_max: int
    kv_unified: bool
    weights_device: int = 0
    weights_host: int = 0
    kv_device: int = 0
    kv_host: int = 0
    state_bytes: int = 0  # recurrent state, included in kv_*
    compute_device: int = 0
    compute_host: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def weights_bytes(self) -> int:
        return self.weights_device + self.weights_host

    @property
    def kv_bytes(self) -> int:
        return self.kv_device + self.kv_host

    @property
    def compute_bytes(self) -> int:
        return self.compute_device + self.compute_host

    @property
    def device_bytes(self) -> int:
        return self.weights_device + self.kv_device + self.compute_device

    @property
    def host_bytes(self) -> int:
        return self.weights_host + self.kv_host + self.compute_host

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "architecture": self.arch,
            "n_ctx": self.n_ctx,
            "n_seq_max": self.n_seq_max,
            "kv_unified": self.kv_unified,
            "n_layer": self.n_layer,
            "layers_on_device": self.layers_on_device,
            "output_on_device": self.output_on_device,
            "weights_bytes": self.weights_bytes,
            "kv_bytes": self.kv_bytes,
            "recurrent_state_bytes": self.state_bytes,
            "compute_bytes": self.compute_bytes,
            "device_bytes": self.device_bytes,
            "host_bytes": self.host_bytes,
            "weights_device_bytes": self.weights_device,
            "weights_host_bytes": self.weights_host,
            "kv_device_bytes": self.kv_device,
            "kv_host_bytes": self.kv_host,
            "compute_device_bytes": self.compute_device,
            "compute_host_bytes": self.compute_host,
            "notes": list(self.notes),
        }


@dataclass(frozen=True)
class Placement:
    """Which layers ``-ngl`` offloads (llama-model.cpp ``load_tensors``, ``get_layer_buft_list``)."""

    n_layer_all: int
    ngl: int

    @property
    def i_gpu_start(self) -> int:
        ngl = self.n_layer_all + 1 if self.ngl < 0 else self.ngl
        return max(self.n_layer_all + 1 - ngl, 0)

    def on_device(self, il: int) -> bool:
        """Layer ``il`` (``n_layer_all`` is the output layer) on the device?"""
        return self.ngl != 0 and il >= self.i_gpu_start


@dataclass(frozen=True)
class Weights:
    device: int
    host: int
    notes: tuple[str, ...] = ()


def weights(meta: Any, hp: Hparams, place: Placement) -> Weights:
    """Bytes of every tensor by ggml's type sizes, placed as llama.cpp places its layer."""
    tensors = meta.tensors
    if tensors is None:
        raise InputError("tensor infos", "this source has no tensor infos: cannot size the weights")
    device = host = 0
    skipped = 0
    names = set()
    embd_bytes = 0
    for info in tensors:
        nbytes = tensor_bytes(info.ggml_type, tuple(info.shape))
        names.add(info.name)
        match = _LAYER.match(info.name)
        if match:
            il = int(match.group(1))
            if il >= hp.n_layer:
                # NextN/MTP layers: created with TENSOR_SKIP unless the MTP head is loaded
                skipped += nbytes
                continue
            on_dev = place.on_device(il)
        elif info.name.startswith(_INPUT):
            on_dev = False
            if info.name == "token_embd.weight":
                embd_bytes = nbytes
        else:
            on_dev = place.on_device(hp.n_layer_all)
        if on_dev:
            device += nbytes
        else:
            host += nbytes
    notes: list[str] = []
    if "output.weight" not in names and embd_bytes and place.on_device(hp.n_layer_all):
        # tied embeddings: the output layer gets its own copy of token_embd on the device
        # (create_tensor with TENSOR_DUPLICATED in another buffer type)
        device += embd_bytes
        notes.append("tied embeddings: token_embd is duplicated on the device for the output layer")
    if skipped:
        notes.append(f"{skipped / MiB:.0f} MiB of NextN/MTP layers not loaded (llama.cpp skips them without MTP)")
    return Weights(device, host, tuple(notes))


@dataclass(frozen=True)
class Context:
    kv_device: int
    kv_host: int
    state: int  # recurrent state bytes, included in kv_*
    n_ctx: int
    kv_cells: int  # per stream, full-attention cache (0: no attention cache)
    swa_cells: int  # per stream, sliding-window cache (0: none)


def context_memory(hp: Hparams, opts: FitOptions, place: Placement) -> Context:
    """KV cache and recurrent state, by device and host.

    llama-context.cpp pads n_ctx to 256 and splits it per sequence unless the cache is
    unified; llama-kv-cache.cpp allocates per layer ``type_k`` rows of ``n_embd_k_gqa``
    and ``type_v`` rows of ``n_embd_v_gqa`` (padded to the widest layer when V is
    transposed, i.e. without flash attention; no V at all for MLA), ``kv_size`` cells
    per stream; llama-kv-cache-iswa.cpp gives sliding-window layers
    ``GGML_PAD(min(kv_size, n_swa*n_seq + n_ubatch), 256)`` cells; llama-memory-recurrent.cpp
    holds ``n_embd_r + n_embd_s`` f32 values per sequence per recurrent layer.
    """
    type_k = cache_type(opts.cache_type_k)
    type_v = cache_type(opts.cache_type_v)
    if not opts.flash_attn and block_and_size(type_v)[0] > 1:
        # src/llama-context.cpp, llama_init_from_model: refused before any allocation
        raise InputError(
            "--cache-type-v",
            f'llama.cpp refuses {opts.cache_type_v} with -fa off: "quantized V cache requires flash_attn to be '
            'enabled" (use -fa on or auto, or an f16 V cache)',
        )
    n_seq = opts.n_seq_max
    n_ctx = pad(max(opts.ctx, 1), 256)
    if opts.unified:
        kv_size, n_stream = n_ctx, 1
    else:
        kv_size = pad(n_ctx // n_seq, 256)
        n_ctx, n_stream = kv_size * n_seq, n_seq
    size_swa = kv_size
    if hp.swa_any and not opts.swa_full:
        size_swa = pad(min(kv_size, hp.n_swa * (n_seq if opts.unified else 1) + opts.n_ubatch), 256)
    v_trans = not opts.flash_attn
    v_max = max((hp.n_embd_v_gqa(il) for il in range(hp.n_layer_all)), default=0)

    kv_dev = kv_host = state = 0
    attends = not hp.recurrent
    has_full = has_swa = False
    for il in range(hp.n_layer):
        if hp.is_recr[il]:
            nbytes = 4 * (hp.n_embd_r + hp.n_embd_s) * max(1, n_seq)
            state += nbytes
        elif attends and hp.n_head_kv[il] > 0:
            if hp.n_layer_kv_from_start >= 0 and il >= hp.n_layer_kv_from_start:
                continue  # reuses an earlier layer's cache
            cells = size_swa if hp.is_swa[il] else kv_size
            has_swa |= hp.is_swa[il]
            has_full |= not hp.is_swa[il]
            k = row_size(type_k, hp.n_embd_k_gqa(il))
            v = 0 if hp.is_mla else row_size(type_v, v_max if v_trans else hp.n_embd_v_gqa(il))
            nbytes = (k + v) * cells * n_stream
        else:
            continue
        # offload_kqv (default on): the layer's cache lives on the layer's device
        if place.on_device(il):
            kv_dev += nbytes
        else:
            kv_host += nbytes
    return Context(kv_dev, kv_host, state, n_ctx, kv_size if has_full else 0, size_swa if has_swa else 0)


class Sizer:
    """One model's memory at any options; hyperparameters and weights computed once
    (the largest-context search and the advice ask many times)."""

    def __init__(self, meta: Any, name: str = "") -> None:
        self.meta = meta
        self.name = name
        self.hp = read_hparams(meta)
        self._weights: dict[int, Weights] = {}

    def weights(self, place: Placement) -> Weights:
        key = place.i_gpu_start if place.ngl != 0 else -1
        if key not in self._weights:
            self._weights[key] = weights(self.meta, self.hp, place)
        return self._weights[key]

    def memory(self, opts: FitOptions) -> ModelMemory:
        return _memory(self, opts)


def model_memory(meta: Any, opts: FitOptions, name: str = "") -> ModelMemory:
    """The memory llama.cpp allocates for one model with these options."""
    return Sizer(meta, name).memory(opts)


def _memory(sizer: Sizer, opts: FitOptions) -> ModelMemory:
    if opts.ctx <= 0:
        raise InputError("--ctx", f"context must be positive, got {opts.ctx}")
    hp, name = sizer.hp, sizer.name
    place = Placement(hp.n_layer_all, opts.ngl)
    w = sizer.weights(place)
    ctx = context_memory(hp, opts, place)
    n_outputs = opts.n_seq_max if opts.n_outputs is None else (opts.n_outputs or opts.batch)
    compute = compute_bytes(hp, opts.n_ubatch, opts.flash_attn, ctx.kv_cells, ctx.swa_cells, n_outputs)
    any_device = place.on_device(hp.n_layer_all)
    mem = ModelMemory(
        name=name,
        arch=hp.arch,
        n_layer=hp.n_layer,
        layers_on_device=sum(1 for il in range(hp.n_layer) if place.on_device(il)),
        output_on_device=any_device,
        n_ctx=ctx.n_ctx,
        n_seq_max=opts.n_seq_max,
        kv_unified=opts.unified,
        weights_device=w.device,
        weights_host=w.host,
        kv_device=ctx.kv_device,
        kv_host=ctx.kv_host,
        state_bytes=ctx.state,
        # the scheduler's graph buffer sits on the device that runs the layers (an estimate:
        # with a device, llama.cpp also keeps a small host compute buffer, not modelled)
        compute_device=compute if any_device else 0,
        compute_host=0 if any_device else compute,
        notes=list(w.notes),
    )
    return mem
