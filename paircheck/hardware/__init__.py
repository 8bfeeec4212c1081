"""The machine a prediction is for: the GPU table (``registry/hardware/gpus.toml``) and
what this machine's own tools (nvidia-smi, rocm-smi, system_profiler) say it has."""
