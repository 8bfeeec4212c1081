"""The read cache: a local GGUF read once and unchanged since is described from its entry,
exactly as a fresh read describes it; a changed file, a damaged entry or an unwritable
folder never changes a verdict.

Real files throughout: llama.cpp's vocab GGUFs, synthetic GGUFs written with gguf-py, a split
model, real entry files on disk that the tests then damage.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import fit_shapes
import pytest

from paircheck._source.read_cache import MAGIC, SETTLE_NS, SUFFIX, ReadCache, file_stamp
from paircheck.errors import InputError
from paircheck.model import ModelDescription
from paircheck.pipeline import check_pair, describe

REAL = ("qwen2", "llama-spm", "gemma-4", "bert-bge", "command-r")


def _cache(folder: Path, **kwargs: int) -> ReadCache:
    # settle_ns=0: these files were written a moment ago; the two-second rule has its own test.
    return ReadCache(folder, **{"settle_ns": 0, **kwargs})


def _entries(folder: Path) -> list[Path]:
    return sorted(folder.glob(f"*{SUFFIX}")) if folder.is_dir() else []


def _same(a: ModelDescription, b: ModelDescription) -> None:
    assert a.metadata == b.metadata
    assert a.vocab == b.vocab
    assert a == b


@pytest.mark.parametrize("name", REAL)
def test_a_cached_read_is_the_fresh_read(real_vocab: Callable[[str], Path], tmp_path: Path, name: str) -> None:
    path = str(real_vocab(name))
    fresh = describe(path)
    cache = _cache(tmp_path)
    first = describe(path, cache=cache)
    assert (cache.hits, cache.misses, len(_entries(tmp_path))) == (0, 1, 1)
    again = describe(path, cache=cache)
    assert (cache.hits, cache.misses) == (1, 1)
    _same(again, fresh)
    _same(first, fresh)
    assert again.vocab.texts is not first.vocab.texts  # loaded, not the same objects kept in memory


def test_every_odd_file_of_the_example_set_comes_out_the_same(tmp_path: Path) -> None:
    # Refused loads, big-endian files, wrong key types, odd special ids: what each one
    # describes (or the one line it is refused with) is the same from its entry.
    import ggufgen

    written = ggufgen.write_example_set(tmp_path / "set")
    cache = _cache(tmp_path / "cache")
    described = 0
    for name in written:
        path = str(tmp_path / "set" / name)
        try:
            fresh = describe(path)
        except InputError as exc:
            with pytest.raises(InputError) as again:
                describe(path, cache=cache)
            assert again.value.message == exc.message
            continue
        describe(path, cache=cache)
        _same(describe(path, cache=cache), fresh)
        described += 1
    assert described > 30
    assert cache.hits == described


def test_texts_that_are_not_the_stored_tokens_are_kept_as_they_are(gguf_factory: Callable[..., Path],
                                                                    tmp_path: Path) -> None:
    # A NUL cuts a text, an empty text becomes [EMPTY_<i>]: the texts are then not the tokens.
    path = str(gguf_factory(replace={6: b"ab\x00cd", 7: b""}))
    fresh = describe(path)
    assert fresh.vocab.texts[6:8] == [b"ab", b"[EMPTY_7]"]
    cache = _cache(tmp_path / "cache")
    describe(path, cache=cache)
    _same(describe(path, cache=cache), fresh)
    assert cache.hits == 1


def test_the_verdict_and_the_first_difference_come_out_the_same(real_vocab: Callable[[str], Path],
                                                                tmp_path: Path) -> None:
    target, draft = str(real_vocab("llama-spm")), str(real_vocab("phi-3"))
    fresh = check_pair(target, draft)
    cache = _cache(tmp_path)
    check_pair(target, draft, cache=cache)
    cached = check_pair(target, draft, cache=cache)
    assert cache.hits == 2
    assert cached == fresh  # every check, warning, fingerprint and registry finding


def test_a_rewritten_file_is_read_again_even_with_its_size_and_time_put_back(gguf_factory: Callable[..., Path],
                                                                            tmp_path: Path) -> None:
    path = gguf_factory("model.gguf", replace={7: "abc"})
    cache = _cache(tmp_path / "cache")
    assert describe(str(path), cache=cache).vocab.texts[7] == b"abc"
    before = path.stat()
    # Same size, same modification time: only the change time (which nobody sets back) moves.
    gguf_factory("model.gguf", replace={7: "xyz"})
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    assert describe(str(path), cache=cache).vocab.texts[7] == b"xyz"
    assert cache.hits == 0


def test_a_file_changed_moments_ago_is_not_kept(gguf_factory: Callable[..., Path], tmp_path: Path) -> None:
    path = gguf_factory("fresh.gguf")
    cache = ReadCache(tmp_path / "cache")  # the default two seconds
    describe(str(path), cache=cache)
    assert _entries(tmp_path / "cache") == []
    old = time.time_ns() - 10 * 10**9
    os.utime(path, ns=(old, old))  # the change time stays now: still not kept
    describe(str(path), cache=cache)
    assert _entries(tmp_path / "cache") == []


def test_overrides_have_their_own_entries(real_vocab: Callable[[str], Path], tmp_path: Path) -> None:
    path = str(real_vocab("llama-spm"))
    cache = _cache(tmp_path)
    plain = describe(path, cache=cache)
    overrides = {"tokenizer.ggml.add_bos_token": ("bool", False)}
    changed = describe(path, overrides, cache=cache)
    assert plain.vocab.add_bos and not changed.vocab.add_bos
    assert len(_entries(tmp_path)) == 2
    assert describe(path, overrides, cache=cache).vocab.add_bos is False
    assert describe(path, cache=cache).vocab.add_bos is True
    assert cache.hits == 2


def _damage_cases() -> dict[str, Callable[[bytes], bytes]]:
    return {
        "truncated": lambda data: data[: len(data) // 2],
        "payload byte flipped": lambda data: data[:-100] + bytes([data[-100] ^ 0x20]) + data[-99:],
        "foreign magic": lambda data: b"NOTOURS!" + data[8:],
        "empty": lambda data: b"",
        "header only": lambda data: data[:20],
        "length past the bound": lambda data: data[:12] + (2**62).to_bytes(8, "little") + data[20:],
        "garbage": lambda data: os.urandom(len(data)),
    }


@pytest.mark.parametrize("case", list(_damage_cases()))
def test_a_damaged_entry_is_a_miss_and_is_replaced(real_vocab: Callable[[str], Path], tmp_path: Path,
                                                   case: str) -> None:
    path = str(real_vocab("qwen2"))
    cache = _cache(tmp_path)
    fresh = describe(path, cache=cache)
    (entry,) = _entries(tmp_path)
    entry.write_bytes(_damage_cases()[case](entry.read_bytes()))
    _same(describe(path, cache=cache), fresh)
    assert cache.hits == 0
    assert entry.read_bytes().startswith(MAGIC)  # written again, whole
    _same(describe(path, cache=cache), fresh)
    assert cache.hits == 1


def test_another_files_entry_under_this_name_is_a_miss(real_vocab: Callable[[str], Path], tmp_path: Path) -> None:
    # A well-formed entry whose key is another file's (a collision of names): the key inside decides.
    a, b = str(real_vocab("qwen2")), str(real_vocab("llama-spm"))
    cache = _cache(tmp_path)
    describe(a, cache=cache)
    (entry_a,) = _entries(tmp_path)
    describe(b, cache=cache)
    (entry_b,) = [p for p in _entries(tmp_path) if p != entry_a]
    entry_b.write_bytes(entry_a.read_bytes())
    assert describe(b, cache=cache).vocab.tokenizer_model == "llama"  # not qwen2's gpt2
    assert cache.hits == 0


def test_the_folder_is_bounded_least_recently_used_first(real_vocab: Callable[[str], Path], tmp_path: Path) -> None:
    cache = _cache(tmp_path, max_entries=2)
    paths = [str(real_vocab(name)) for name in ("qwen2", "llama-spm", "phi-3")]
    describe(paths[0], cache=cache)
    time.sleep(0.01)
    describe(paths[1], cache=cache)
    time.sleep(0.01)
    describe(paths[0], cache=cache)  # a hit: qwen2 is now the most recently used
    time.sleep(0.01)
    describe(paths[2], cache=cache)  # the third entry: llama-spm, the least recently used, goes
    assert len(_entries(tmp_path)) == 2
    hits = cache.hits
    describe(paths[0], cache=cache)
    describe(paths[2], cache=cache)
    describe(paths[1], cache=cache)
    assert cache.hits == hits + 2


def test_the_size_bound_keeps_nothing_larger(real_vocab: Callable[[str], Path], tmp_path: Path) -> None:
    cache = _cache(tmp_path, max_bytes=1 << 20)  # below one entry of a 152k-token vocabulary
    path = str(real_vocab("qwen2"))
    describe(path, cache=cache)
    describe(path, cache=cache)
    assert (cache.hits, _entries(tmp_path)) == (0, [])


def test_an_unwritable_folder_is_no_error(real_vocab: Callable[[str], Path], tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder would be")
    cache = _cache(blocker / "read")
    path = str(real_vocab("qwen2"))
    _same(describe(path, cache=cache), describe(path))
    assert cache.hits == 0


def test_every_shard_of_a_split_model_is_still_checked(tmp_path: Path) -> None:
    (tmp_path / "split").mkdir()
    shards = fit_shapes.write_split("qwen2.5-0.5b", tmp_path / "split", max_tensors=100)
    cache = _cache(tmp_path / "cache")
    whole = describe(str(shards[0]), cache=cache)
    assert whole.metadata.tensor_error is None
    with open(shards[-1], "r+b") as handle:  # the last shard cut short after the entry was kept
        handle.truncate(shards[-1].stat().st_size // 2)
    cut = describe(str(shards[0]), cache=cache)
    assert cache.hits == 1
    assert cut.metadata.tensor_error is not None
    assert shards[-1].name in cut.metadata.tensor_error.file


def test_a_missing_file_is_still_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        describe(str(tmp_path / "gone.gguf"), cache=_cache(tmp_path))


def _cli(args: list[str], cache_home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PAIRCHECK_CACHE_HOME": str(cache_home)}
    return subprocess.run([sys.executable, "-m", "paircheck", *args], capture_output=True, text=True, env=env,
                          timeout=120)


@pytest.mark.parametrize("command", ["check", "run"])
def test_the_commands_keep_and_reuse_and_no_cache_reads_again(real_vocab: Callable[[str], Path], tmp_path: Path,
                                                              command: str) -> None:
    # The pair check and the launch-script hook (run --dry-run: checked, not started).
    target, draft = real_vocab("llama-spm"), real_vocab("phi-3")
    for path in (target, draft):  # the two-second rule: the corpus may have just been downloaded
        wait = 2.1 - (time.time_ns() - max(path.stat().st_mtime_ns, path.stat().st_ctime_ns)) / 1e9
        if wait > 0:
            time.sleep(wait)
    home = tmp_path / "home"
    if command == "check":
        args, tail = ["--json"], [str(target), str(draft)]
    else:
        args, tail = ["run", "--dry-run", "--json"], ["--", "llama-server", "-m", str(target), "-md", str(draft),
                                                      "--spec-type", "draft-simple"]
    bypass = _cli([*args, "--no-cache", *tail], home)
    assert _entries(home / "read") == []
    first = _cli([*args, *tail], home)
    entries = {p: p.stat().st_mtime_ns for p in _entries(home / "read")}
    assert len(entries) == 2
    second = _cli([*args, *tail], home)
    assert bypass.returncode == first.returncode == second.returncode
    assert bypass.stdout == first.stdout == second.stdout
    # The second run used both entries (a hit marks its entry used) and wrote none.
    assert all(p.stat().st_mtime_ns > t for p, t in entries.items())
    assert set(_entries(home / "read")) == set(entries)


def test_a_well_formed_entry_of_the_wrong_shape_is_a_miss(real_vocab: Callable[[str], Path], tmp_path: Path) -> None:
    # Entries with a valid header, CRC and key, as only a hand-made file could have them:
    # the wrong class where the vocabulary goes, or nesting deeper than the decoder recurses.
    import marshal
    import struct
    import zlib

    from paircheck._source.read_cache import _encode, _key, file_stamp

    path = str(real_vocab("llama-spm"))
    fresh = describe(path)
    stamp = file_stamp(path)
    assert stamp is not None
    key = _key(stamp, {})
    deep: object = 1
    for _ in range(900):
        deep = ("C", "list", [deep])
    identity = _encode(fresh.identity)
    shapes = [
        (key, identity, identity, identity, 3),
        (key, _encode(fresh.metadata), identity, identity, None),
        (key, _encode(fresh.metadata), _encode(fresh.vocab), identity, "3"),
        (key, deep, identity, identity, None),
    ]
    cache = _cache(tmp_path)
    entry = cache._entry(key)
    tmp_path.mkdir(exist_ok=True)
    for shape in shapes:
        payload = marshal.dumps(shape, 2)
        entry.write_bytes(struct.pack("<8sIQ", MAGIC, zlib.crc32(payload), len(payload)) + payload)
        _same(describe(path, cache=cache), fresh)
    assert cache.hits == 0


def test_the_settle_time_is_two_seconds_from_the_later_of_both_times(gguf_factory: Callable[..., Path],
                                                                     tmp_path: Path) -> None:
    # put() on stamps made to have been changed just under and just over two seconds ago,
    # so the test tells 2 s from 2 ms (a file written by the test is always moments old)
    path = str(gguf_factory("settle.gguf"))
    desc = describe(path)
    read = (desc.metadata, desc.vocab, desc.identity)
    real = file_stamp(path)
    assert real is not None and ReadCache(tmp_path).settle_ns == SETTLE_NS == 2 * 10**9

    def stamp(mtime_ago_s: float, ctime_ago_s: float) -> tuple[str, int, int, int, int, int]:
        now = time.time_ns()
        return real[0], real[1], real[2], real[3], now - int(mtime_ago_s * 1e9), now - int(ctime_ago_s * 1e9)

    cache = ReadCache(tmp_path / "c")
    young, old, mixed = stamp(1.5, 1.5), stamp(2.5, 2.5), stamp(60.0, 1.5)
    for s in (young, old, mixed):
        cache.put(s, {}, read)
    assert cache.get(young, {}) is None  # changed 1.5 s ago: not kept
    assert cache.get(mixed, {}) is None  # its change time (ctime) is recent: not kept either
    kept = cache.get(old, {})
    assert kept is not None and kept[1] == desc.vocab
    assert len(_entries(tmp_path / "c")) == 1


def test_two_values_of_one_override_have_their_own_entries(real_vocab: Callable[[str], Path],
                                                           tmp_path: Path) -> None:
    path = str(real_vocab("llama-spm"))
    cache = _cache(tmp_path)
    off = {"tokenizer.ggml.add_bos_token": ("bool", False)}
    on = {"tokenizer.ggml.add_bos_token": ("bool", True)}
    eos = {"tokenizer.ggml.eos_token_id": ("int", 7)}
    assert describe(path, off, cache=cache).vocab.add_bos is False
    assert describe(path, on, cache=cache).vocab.add_bos is True
    assert describe(path, eos, cache=cache).vocab.eos_id == 7
    assert len(_entries(tmp_path)) == 3 and cache.hits == 0
    # each comes back as it was kept, from its own entry
    assert describe(path, off, cache=cache).vocab.add_bos is False
    assert describe(path, on, cache=cache).vocab.add_bos is True
    assert describe(path, eos, cache=cache).vocab.eos_id == 7
    assert describe(path, cache=cache).vocab.eos_id != 7
    assert cache.hits == 3


def test_a_modification_time_set_in_the_future_is_not_settled(gguf_factory: Callable[..., Path],
                                                              tmp_path: Path) -> None:
    # the later of both times decides: here the mtime (utime can set it ahead), not the ctime
    path = str(gguf_factory("ahead.gguf"))
    desc = describe(path)
    real = file_stamp(path)
    assert real is not None
    now = time.time_ns()
    ahead = (real[0], real[1], real[2], real[3], now + 60 * 10**9, now - 60 * 10**9)
    cache = ReadCache(tmp_path / "c")
    cache.put(ahead, {}, (desc.metadata, desc.vocab, desc.identity))
    assert cache.get(ahead, {}) is None and (cache.hits, cache.misses) == (0, 1)
    assert cache.get(ahead, {}) is None and cache.misses == 2


def test_which_entries_the_bound_keeps(real_vocab: Callable[[str], Path], tmp_path: Path) -> None:
    paths = [str(real_vocab(name)) for name in ("llama-spm", "phi-3", "qwen2")]
    cache = _cache(tmp_path, max_entries=2)
    for i in (0, 1, 0, 2):  # llama-spm is used again before qwen2 comes: phi-3 is the oldest
        describe(paths[i], cache=cache)
        time.sleep(0.01)
    look = _cache(tmp_path)
    stamps = [file_stamp(p) for p in paths]
    assert all(s is not None for s in stamps)
    kept = [look.get(s, {}) is not None for s in stamps if s is not None]
    assert kept == [True, False, True]


def test_the_size_bound_counts_every_entry_kept(real_vocab: Callable[[str], Path], tmp_path: Path) -> None:
    paths = [str(real_vocab(name)) for name in ("llama-spm", "phi-3")]
    sizes = []
    for p in paths:  # each entry's size, alone in a folder
        folder = tmp_path / f"alone-{len(sizes)}"
        describe(p, cache=_cache(folder))
        (entry,) = _entries(folder)
        sizes.append(entry.stat().st_size)
    both = _cache(tmp_path / "both", max_bytes=sum(sizes))  # exactly both: both kept
    for p in paths:
        describe(p, cache=both)
        time.sleep(0.01)
    assert len(_entries(tmp_path / "both")) == 2
    one = _cache(tmp_path / "one", max_bytes=sum(sizes) - 1)  # a byte less: the older goes
    for p in paths:
        describe(p, cache=one)
        time.sleep(0.01)
    (left,) = _entries(tmp_path / "one")
    stamp = file_stamp(paths[1])
    assert stamp is not None and _cache(tmp_path / "one").get(stamp, {}) is not None
    # an entry written under a larger bound is read by a cache whose bound is its exact length
    payload = sizes[0] - 20  # the header: magic, CRC32, length
    stamp0 = file_stamp(paths[0])
    assert stamp0 is not None
    assert _cache(tmp_path / "alone-0", max_bytes=payload).get(stamp0, {}) is not None
    assert _cache(tmp_path / "alone-0", max_bytes=payload - 1).get(stamp0, {}) is None


def test_the_folder_is_made_with_its_parents(real_vocab: Callable[[str], Path], tmp_path: Path) -> None:
    path = str(real_vocab("llama-spm"))
    cache = _cache(tmp_path / "not" / "yet" / "there")  # as cache_home()/read on a fresh machine
    describe(path, cache=cache)
    describe(path, cache=cache)
    assert cache.hits == 1 and len(_entries(tmp_path / "not" / "yet" / "there")) == 1


def test_a_path_that_is_not_utf8_is_kept_too(gguf_factory: Callable[..., Path], tmp_path: Path) -> None:
    # a file name with a byte that is not UTF-8 (os.fsdecode gives a lone surrogate)
    path = gguf_factory("caf\udce9.gguf")
    assert os.fsencode(str(path)).endswith(b"caf\xe9.gguf")
    cache = _cache(tmp_path / "c")
    first = describe(str(path), cache=cache)
    again = describe(str(path), cache=cache)
    assert cache.hits == 1 and again.vocab == first.vocab


def test_the_token_texts_are_kept_once(real_vocab: Callable[[str], Path], tmp_path: Path) -> None:
    # llama-spm's texts are its stored tokens: the entry holds them once, not twice
    import marshal

    path = str(real_vocab("llama-spm"))
    desc = describe(path, cache=_cache(tmp_path))
    (entry,) = _entries(tmp_path)
    once = len(marshal.dumps(desc.vocab.texts, 2))
    assert once < entry.stat().st_size < 1.5 * once


def test_an_entry_whose_shared_count_is_past_the_tokens_is_a_miss(real_vocab: Callable[[str], Path],
                                                                   tmp_path: Path) -> None:
    # a well-formed entry (right CRC) whose count of shared texts is past the token list
    import marshal
    import struct
    import zlib

    path = str(real_vocab("llama-spm"))
    describe(path, cache=_cache(tmp_path))
    (entry,) = _entries(tmp_path)
    data = entry.read_bytes()
    key, meta, vocab, identity, shared = marshal.loads(data[20:])
    assert type(shared) is int and shared > 0
    for bad in (shared + 1, -1, float(shared)):
        payload = marshal.dumps((key, meta, vocab, identity, bad), 2)
        entry.write_bytes(struct.pack("<8sIQ", MAGIC, zlib.crc32(payload), len(payload)) + payload)
        cache = _cache(tmp_path)
        again = describe(path, cache=cache)
        assert cache.hits == 0, bad
        assert again.vocab.texts == describe(path).vocab.texts


def test_entries_are_readable_by_their_owner_only(gguf_factory: Callable[..., Path], tmp_path: Path) -> None:
    # an entry names the real path of a user's file and holds its vocabulary: in a cache
    # folder other users can list, they cannot read it
    import stat

    path = str(gguf_factory("private.gguf"))
    describe(path, cache=_cache(tmp_path / "c"))
    (entry,) = _entries(tmp_path / "c")
    assert stat.S_IMODE(entry.stat().st_mode) == 0o600


def test_an_entry_with_a_long_tail_is_a_miss_read_no_further(gguf_factory: Callable[..., Path],
                                                             tmp_path: Path) -> None:
    # 64 MB after a valid entry (a file appended to by mistake): one byte past the payload is
    # enough to tell it is not what was written, so the miss costs no more memory than the entry
    import tracemalloc

    path = str(gguf_factory("tail.gguf"))
    fresh = describe(path)
    cache = _cache(tmp_path / "c")
    describe(path, cache=cache)
    (entry,) = _entries(tmp_path / "c")
    size = entry.stat().st_size
    assert size < 1 << 20
    with open(entry, "r+b") as handle:
        handle.truncate(size + (64 << 20))  # a sparse tail of zeros: nothing written to disk
    stamp = file_stamp(path)
    assert stamp is not None
    tracemalloc.start()
    try:
        found = cache.get(stamp, {})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert found is None and cache.misses == 2
    assert peak < 8 << 20, peak
    _same(describe(path, cache=cache), fresh)  # and the entry is written again, whole
    assert _entries(tmp_path / "c")[0].stat().st_size == size


def test_a_value_the_encoder_never_writes_is_a_miss(real_vocab: Callable[[str], Path], tmp_path: Path) -> None:
    # A well-formed entry (right CRC) holding, where the vocabulary's eos id goes, a value
    # that is neither plain nor tagged: marshal can hold a list or a set, the encoder never
    # writes one untagged. Taken as it is, the check would see an eos id of [2].
    import dataclasses
    import marshal
    import struct
    import zlib

    from paircheck.model import LlamaVocab

    path = str(real_vocab("llama-spm"))
    fresh = describe(path)
    describe(path, cache=_cache(tmp_path))
    (entry,) = _entries(tmp_path)
    key, meta, vocab, identity, shared = marshal.loads(entry.read_bytes()[20:])
    assert vocab[:2] == ("D", "LlamaVocab")
    at = [f.name for f in dataclasses.fields(LlamaVocab)].index("eos_id")
    assert vocab[2][at] == fresh.vocab.eos_id
    for odd in ([fresh.vocab.eos_id], {fresh.vocab.eos_id}):
        values = list(vocab[2])
        values[at] = odd
        payload = marshal.dumps((key, meta, ("D", "LlamaVocab", values), identity, shared), 2)
        entry.write_bytes(struct.pack("<8sIQ", MAGIC, zlib.crc32(payload), len(payload)) + payload)
        cache = _cache(tmp_path)
        again = describe(path, cache=cache)
        assert cache.hits == 0, odd
        assert again.vocab.eos_id == fresh.vocab.eos_id
