"""Predicting speed: the cost model of llama-server's speculative loop (``model``)."""
