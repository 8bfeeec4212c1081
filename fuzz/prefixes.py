"""Prefix truncation of real GGUF headers: a truncated file must give one InputError that
names the offset where the bytes ran out, never another exception and never a success.

    python fuzz/prefixes.py [--files N] [--head BYTES]

For each of the N smallest real vocab files of tests/corpus.py (default 5), the prefix
lengths tried are: every length up to ``--head`` (default 16 KiB: header, general keys,
the first tokens), every length in the last 512 bytes before the end of the metadata, and
lengths -3..+3 around every structure boundary (each key/value pair, key, type, value;
inside big arrays the first and last 64 elements and every 997th one). Every length
below the end of the metadata is a truncation; the file is read with its size known
(a file) and unknown (a pipe).
"""

from __future__ import annotations

import argparse
import re
import struct
import sys
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for _p in (ROOT / "tests", ROOT / "fixtures", ROOT / "fuzz"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

from targets import BytesSource  # noqa: E402

from paircheck._source.gguf_file import describe_source  # noqa: E402
from paircheck._source.interface import ReadOptions  # noqa: E402
from paircheck.errors import InputError  # noqa: E402

NAMES_OFFSET = re.compile(r"(?:at byte|at offset) \d+")
SCALAR_SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}


def boundaries(data: bytes) -> Iterator[int]:
    """Offsets where one GGUF structure ends and the next begins (header and kv section)."""
    bo = "<" if struct.unpack_from("<I", data, 4)[0] in (2, 3) else ">"
    yield from (0, 4, 8, 16, 24)
    (n_kv,) = struct.unpack_from(bo + "Q", data, 16)
    pos = 24

    def u(fmt: str, size: int) -> int:
        nonlocal pos
        value = struct.unpack_from(bo + fmt, data, pos)[0]
        pos += size
        return value

    for _ in range(n_kv):
        yield pos
        klen = u("Q", 8)
        yield pos
        pos += klen
        yield pos
        vtype = u("I", 4)
        yield pos
        if vtype in SCALAR_SIZES:
            pos += SCALAR_SIZES[vtype]
        elif vtype == 8:
            slen = u("Q", 8)  # not `pos += u(...)`: that reads pos before u() moves it
            pos += slen
            yield pos
        elif vtype == 9:
            etype = u("I", 4)
            yield pos
            count = u("Q", 8)
            yield pos
            if etype in SCALAR_SIZES:
                size = SCALAR_SIZES[etype]
                for k in _sampled(count):
                    yield pos + k * size
                pos += count * size
            elif etype == 8:
                wanted = set(_sampled(count))
                for k in range(count):
                    if k in wanted:
                        yield pos
                        yield pos + 8
                    pos += 8 + struct.unpack_from(bo + "Q", data, pos)[0]
            else:
                raise ValueError(f"nested arrays at {pos}: not in the real vocab files")
        yield pos


def _sampled(count: int) -> Iterable[int]:
    return sorted(set(range(min(count, 64))) | set(range(max(0, count - 64), count)) | set(range(0, count, 997)))


def prefix_lengths(data: bytes, kv_end: int, head: int) -> list[int]:
    lengths = set(range(min(head, kv_end)))
    lengths |= set(range(max(0, kv_end - 512), kv_end))
    for b in boundaries(data):
        lengths |= {n for n in range(b - 3, b + 4) if 0 <= n < kv_end}
    return sorted(lengths)


def check_prefix(data: bytes, n: int) -> str | None:
    """None when the prefix of length ``n`` fails as it should, else what went wrong."""
    for known in (True, False):
        try:
            desc = describe_source(BytesSource(data[:n], known), "prefix", "gguf", ReadOptions())
        except InputError as exc:
            text = str(exc)
            if "\n" in text:
                return f"multi-line message: {text!r}"
            if n == 0:
                if "empty file" not in text:
                    return f"empty prefix: {text!r}"
            elif not NAMES_OFFSET.search(text):
                return f"message does not name the offset: {text!r}"
            continue
        except Exception as exc:  # the property under test: nothing but InputError
            return f"{type(exc).__name__}: {exc}"
        # Past the counts a cut is described: loadable fails as an incomplete file.
        error = desc.metadata.tensor_error
        if error is not None and error.incomplete and not desc.vocab.loadable:
            continue
        return "a truncated file was read as complete"
    return None


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=5)
    parser.add_argument("--head", type=int, default=16 << 10)
    args = parser.parse_args()
    import corpus

    from paircheck._source.gguf_reader import read_metadata

    files = sorted(corpus.corpus_files(), key=lambda p: p.stat().st_size)[: args.files]
    total = failures = 0
    start = time.monotonic()
    for path in files:
        data = path.read_bytes()
        meta, _ = read_metadata(BytesSource(data))
        lengths = prefix_lengths(data, meta.kv_end, args.head)
        t0 = time.monotonic()
        bad = 0
        for n in lengths:
            problem = check_prefix(data, n)
            if problem is not None:
                bad += 1
                if bad <= 5:
                    print(f"{path.name}: prefix {n}: {problem}", flush=True)
        total += len(lengths)
        failures += bad
        print(f"{path.name}: metadata {meta.kv_end} bytes, {len(lengths)} prefixes, {bad} failures, "
              f"{time.monotonic() - t0:.0f} s", flush=True)
    print(f"prefixes: {len(files)} files, {total} prefix lengths (x2: size known and unknown), "
          f"{failures} failures, {time.monotonic() - start:.0f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
