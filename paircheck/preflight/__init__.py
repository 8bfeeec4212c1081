"""Pre-flight: read a launch command (llama.cpp programs, legacy names included, vllm serve), an
Ollama Modelfile, or a Python file (vLLM's and transformers' API, read with ast) the way the
launcher would, and report what would break or silently not speculate.

Every code is declared in ``codes.py`` (``RULES``); ``launchers.lint_argv`` picks the launcher."""
