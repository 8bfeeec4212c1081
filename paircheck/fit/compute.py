"""An estimate of llama.cpp's compute (graph) buffer: calibrated against llama.cpp, not derived.

llama.cpp sizes it by building the worst-case graph (a full ubatch of prompt tokens;
llama-context.cpp ``graph_reserve`` with ``min(n_ubatch, n_outputs_max)`` outputs) and
letting ggml-alloc pack the intermediate tensors, so the figure depends on the backend's
kernels. paircheck models the peaks that dominate it (f32 activations per token of the
ubatch):

* inside a layer: the FFN intermediates (gate, up, activation: ``3 x n_ff``; for MoE
  ``3 x n_expert_used x n_ff_exp`` plus the experts' outputs) and four hidden rows, plus
  the attention mask(s) that stay live through every layer (f16 with flash attention);
* the output: the logits of ``min(n_ubatch, n_outputs)`` tokens plus two hidden rows
  (plus MLA's latent rows). llama-server asks for few outputs (``-np`` times one plus
  the draft length), llama-fit-params for a whole batch, so this peak is the large one
  only in the latter;
* without flash attention, the attention scores of a full layer (``n_head`` x KV cells
  per token) with the f32 mask.

Measured against llama.cpp on the CPU backend (tests/fit/test_fit_llamacpp.py: both
llama-fit-params' projection and llama-server's allocation, 7 architectures, ubatch
256..2048, contexts 4096..32768, flash attention on and off): within ``COMPUTE_BOUND_REL``
or ``COMPUTE_BOUND_ABS``. On a GPU backend the device buffer follows the same graph;
llama.cpp then also keeps a small host compute buffer, which paircheck does not count.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from paircheck.fit.hparams import Hparams

# The stated error of the estimate against llama.cpp: relative, or absolute below it.
COMPUTE_BOUND_REL = 0.10
COMPUTE_BOUND_ABS = 32 * 1024 * 1024


def compute_bytes(hp: Hparams, ub: int, flash_attn: bool, kv_cells: int, swa_cells: int, n_outputs: int) -> int:
    """Estimated compute buffer for a ubatch of ``ub`` tokens (the context's n_ubatch).

    ``kv_cells``/``swa_cells``: cells per stream of the full and sliding-window caches
    (0 when there is none); ``n_outputs``: the context's ``n_outputs_max``.
    """
    n_head = max(hp.n_head, default=0)
    # FFN intermediates, per token: dense layers, or the routed experts of MoE layers
    ffn = 3 * max(hp.n_ff, default=0)
    if hp.n_expert and hp.n_expert_used and hp.n_ff_exp:
        ffn = max(ffn, 3 * hp.n_expert_used * hp.n_ff_exp + hp.n_expert_used * hp.n_embd)
    mask_bytes = 2 if flash_attn else 4
    masks = mask_bytes * ub * (kv_cells + swa_cells)
    layer = masks + 4 * ub * (ffn + 4 * hp.n_embd)
    out = 4 * min(ub, n_outputs) * hp.n_vocab + 4 * ub * 2 * hp.n_embd
    if hp.is_mla:
        # absorbed MLA: queries and outputs in the latent width (kv_lora_rank) per head
        out += 2 * 4 * ub * n_head * hp.head_v
    peak = max(layer, out)
    if flash_attn or not kv_cells:
        return peak
    attn = 4 * ub * kv_cells * (n_head + 1) + 4 * ub * 6 * hp.n_embd
    return max(peak, attn)
