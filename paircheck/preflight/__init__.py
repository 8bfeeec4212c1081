"""Pre-flight: read a launch command (llama-server, vllm serve) or an Ollama Modelfile the
way the launcher would, and report what would break or silently not speculate."""
