"""Pick the source for what the user typed and return its ModelDescription.

Order: an existing local folder (Hugging Face model folder) or file (GGUF, any shard of
a split GGUF), then an http(s) URL, then a Hub reference (``org/name``,
``org/name:Q4_K_M``, ``org/name/file.gguf``, ``hf://...``). A local path always wins over
a Hub id of the same spelling, as with transformers' ``from_pretrained``; a missing path
that looks local (``./x.gguf``, ``models/a/b.gguf`` beside an existing ``models``) is "no
such file", never a Hub lookup.
"""

from __future__ import annotations

from pathlib import Path

from paircheck._source.gguf_file import GGUFFileSource
from paircheck._source.hf_folder import HFFolderSource
from paircheck._source.hub import HubSource
from paircheck._source.interface import ReadOptions, Source
from paircheck._source.remote import HTTPSource
from paircheck.errors import InputError
from paircheck.model import ModelDescription


def sources() -> tuple[Source, ...]:
    """Every source, in the order they are asked whether they claim a spec."""
    return (HFFolderSource(), GGUFFileSource(), HTTPSource(), HubSource())


def describe(spec: str, options: ReadOptions | None = None) -> ModelDescription:
    """Describe one model from whichever source claims ``spec``."""
    if not spec:
        raise InputError("", "empty model argument")
    options = options or ReadOptions()
    for source in sources():
        if source.name == "hub" and looks_local(spec):
            break
        if source.claims(spec):
            return source.describe(spec, options)
    raise InputError(spec, "no such file")


def looks_local(spec: str) -> bool:
    """A missing path the user meant as local, so the error is "no such file", not a Hub one.

    Local: starts with ``.``, ``/`` or ``~``, has a backslash or a drive letter, or a
    leading part of a longer path exists here (``models/a/b.gguf`` beside a ``models``
    folder). A ``.gguf`` needs ``org/name/file.gguf`` (3+ parts) to be a Hub file.
    ``hf://`` is always the Hub.
    """
    if spec.startswith("hf://"):
        return False
    if spec.startswith((".", "/", "~")) or "\\" in spec or (spec[:1].isalpha() and spec[1:3] in (":/", ":\\")):
        return True
    parts = [p for p in spec.split("/") if p]
    if spec.lower().endswith(".gguf") and len(parts) <= 2:
        return True
    # A bare ``org/name`` stays a repo id even beside an ``org`` folder.
    return (len(parts) > 2 or spec.lower().endswith(".gguf")) and Path(parts[0]).expanduser().exists()
