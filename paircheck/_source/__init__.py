"""Sources: each turns one way of naming a model into a ModelDescription.

One module per kind of source (GGUF file, ...). ``resolve`` picks the source
for what the user typed.
"""
