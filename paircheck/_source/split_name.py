"""Split-model file names, as llama.cpp writes and reads them: ``PREFIX-00002-of-00005.gguf``.

The one place paircheck parses or composes them. The form is the pinned llama.cpp's
``llama_split_path`` (``"%s-%05d-of-%05d.gguf"``, src/llama.cpp of llama-cpp-python
0.3.36), which ``gguf-split`` writes and the model loader opens, shard by shard, from
the first one's name. Pure string work that imports nothing of paircheck, so that the
registry's name matching can drop the suffix the same way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

EXTENSION = ".gguf"
# ``-00002-of-00005`` at the end of a name without its extension.
_SUFFIX = re.compile(r"-(?P<no>\d{5})-of-(?P<count>\d{5})$")


@dataclass(frozen=True)
class SplitName:
    """One shard's name taken apart: ``prefix`` keeps any folder or URL before the name."""

    prefix: str
    no: int  # 1 for the first shard
    count: int

    def shard(self, no: int) -> str:
        """The name of shard ``no`` (1-based) of the same model (llama_split_path)."""
        return shard_name(self.prefix, no, self.count)

    @property
    def first(self) -> str:
        return self.shard(1)

    @property
    def is_first(self) -> bool:
        return self.no == 1

    def others(self) -> list[str]:
        """Shards 2..count, in order: what llama.cpp opens after the first one."""
        return [self.shard(no) for no in range(2, self.count + 1)]


def shard_name(prefix: str, no: int, count: int) -> str:
    return f"{prefix}-{no:05d}-of-{count:05d}{EXTENSION}"


def parse(name: str) -> SplitName | None:
    """``name`` (a file name, a path, or a URL ending in one) as a shard, or None when it
    is not named as one. Case-sensitive, as llama.cpp compares it."""
    if not name.endswith(EXTENSION):
        return None
    match = _SUFFIX.search(name[: -len(EXTENSION)])
    if match is None:
        return None
    return SplitName(name[: match.start()], int(match["no"]), int(match["count"]))


def all_shards(first: str) -> tuple[str, ...]:
    """Every shard of the split model ``first`` names (its first shard), in order; the name
    alone when it is a whole file (or not a first shard)."""
    split = parse(first)
    if split is None or not split.is_first:
        return (first,)
    return (first, *split.others())


def is_first_or_whole(name: str) -> bool:
    """False only for shards 2..N: llama.cpp loads a split model from its first shard."""
    split = parse(name)
    return split is None or split.is_first


def strip_suffix(stem: str) -> str:
    """A name without its extension, less any ``-0000N-of-0000M`` (for matching names)."""
    return _SUFFIX.sub("", stem)
