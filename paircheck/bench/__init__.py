"""Is the pair worth it: measure it against a real llama-server (``bench``), or model it (``estimate``).

A measurement and a model are kept apart on purpose: ``client``/``compare``/``server``
measure, ``estimate`` computes Leviathan et al.'s formula and always says it is a model.
"""
