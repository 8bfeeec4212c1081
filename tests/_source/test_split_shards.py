"""Split-shard names (``PREFIX-00002-of-00005.gguf``) are parsed and composed in one place,
``paircheck/_source/split_name.py``: no other module spells the pattern."""

from __future__ import annotations

import re
from pathlib import Path

from paircheck._source.split_name import all_shards

PACKAGE = Path(__file__).resolve().parents[2] / "paircheck"
# What composing or parsing the names takes: a five-digit field, as a format or a regex.
_SPELLED = re.compile(r":05d\}|\\d\{5\}|-of-\(|-of-\{")


def test_all_shards() -> None:
    assert all_shards("m-bf16-00001-of-00003.gguf") == (
        "m-bf16-00001-of-00003.gguf", "m-bf16-00002-of-00003.gguf", "m-bf16-00003-of-00003.gguf")
    assert all_shards("dir/m-q4_k_m.gguf") == ("dir/m-q4_k_m.gguf",)
    assert all_shards("m-00002-of-00003.gguf") == ("m-00002-of-00003.gguf",)  # not a first shard


def test_only_split_name_spells_the_pattern() -> None:
    spelled = [str(p.relative_to(PACKAGE)) for p in sorted(PACKAGE.rglob("*.py"))
               if p.name != "split_name.py" and _SPELLED.search(p.read_text(encoding="utf-8"))]
    assert spelled == []
