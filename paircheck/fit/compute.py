"""An estimate of llama.cpp's compute (graph) buffer: calibrated against llama.cpp, not derived.

llama.cpp sizes it by building the worst-case graph (a full ubatch of prompt tokens, every
position an output; llama-context.cpp ``graph_reserve``) and letting ggml-alloc pack the
intermediate tensors, so the figure depends on the backend's kernels. paircheck models the
two peaks that dominate it, in f32:

* the output: the logits of a full ubatch (``n_vocab`` per token) plus two hidden-state
  rows per token (plus the per-head latent rows of MLA attention);
* without flash attention, the attention scores of a full layer, ``n_head`` times the
  KV length per token, plus the f32 mask, plus a few hidden-state rows.

Measured against llama.cpp's own projection (llama-fit-params --fit-print, CPU backend) on
the shapes in tests/test_fit_llamacpp.py, ubatch 256..2048, contexts 4096..32768, flash
attention on and off: within ``COMPUTE_BOUND`` (tests assert it). On a GPU backend
the device buffer follows the same graph; llama.cpp then also keeps a small host compute
buffer, which paircheck does not count.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from paircheck.fit.hparams import Hparams
    from paircheck.fit.memory import FitOptions

# The stated error of the estimate against llama.cpp: relative, or absolute below it.
COMPUTE_BOUND_REL = 0.10
COMPUTE_BOUND_ABS = 32 * 1024 * 1024


def compute_bytes(hp: Hparams, opts: FitOptions, kv_cells: int) -> int:
    """Estimated compute buffer for a ubatch of ``opts.n_ubatch`` against ``kv_cells`` cells."""
    ub = opts.n_ubatch
    n_head = max(hp.n_head, default=0)
    out = 4 * ub * (hp.n_vocab + 2 * hp.n_embd)
    if hp.is_mla:
        # absorbed MLA: queries and outputs in the latent width (kv_lora_rank) per head
        out += 2 * 4 * ub * n_head * hp.head_v
    if opts.flash_attn or hp.recurrent:
        return out
    attn = 4 * ub * kv_cells * (n_head + 1) + 4 * ub * 6 * hp.n_embd
    return max(out, attn)
