"""The workload grid and context filling (paircheck.workload), with a real tokenizer: Qwen2's
byte-level BPE rebuilt from llama.cpp's ggml-vocab-qwen2.gguf (tests/hf_build.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hf_build import build_qwen2_folder

from paircheck.errors import InputError
from paircheck.workload import MAX_GRID, Workload, builtin_document, fill_to_depth, parse_grid, read_document


@pytest.fixture(scope="module")
def count_tokens(real_vocab: Callable[[str], Path], tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], int]:
    from tokenizers import Tokenizer

    folder = build_qwen2_folder(real_vocab("qwen2"), tmp_path_factory.mktemp("qwen2") / "Qwen2.5-0.5B", 151936)
    tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
    # a chat template's own tokens around the text, as the probe counts through llama-server
    return lambda text: len(tok.encode("<|im_start|>user\n" + text + "<|im_end|>\n<|im_start|>assistant\n").ids)


def test_the_grid_is_every_combination_context_outermost() -> None:
    grid = parse_grid("512,8k", "64,256", "1,4")
    assert len(grid) == 8 and grid[0] == Workload(512, 64, 1) and grid[-1] == Workload(8192, 256, 4)
    assert [w.context_tokens for w in grid] == [512] * 4 + [8192] * 4
    assert parse_grid("0, 0 ,512", "128", "2") == [Workload(0, 128, 2), Workload(512, 128, 2)]  # repeats dropped


@pytest.mark.parametrize(("args", "option"), [
    (("abc", "128", "1"), "--context-tokens"), (("0", "0", "1"), "--n-predict"), (("0", "128", "0"), "--parallel"),
    (("0", "128", "1,"), "--parallel"), (("-5", "128", "1"), "--context-tokens"),
    (("1,2,3,4,5,6,7,8,9", "1,2,3,4,5,6,7,8", "1"), "--context-tokens/--n-predict/--parallel"),
])
def test_bad_grids_are_refused_naming_the_option(args: tuple[str, str, str], option: str) -> None:
    with pytest.raises(InputError) as err:
        parse_grid(*args)
    assert err.value.where == option
    assert MAX_GRID == 64


@pytest.mark.parametrize("depth", [300, 4096])
def test_a_context_is_filled_to_its_depth_within_a_word(count_tokens: Callable[[str], int], depth: int) -> None:
    request = "With the document above, list the commands it describes."
    filled = fill_to_depth(request, depth, count_tokens)
    assert filled.text.endswith(request) and filled.tokens == count_tokens(filled.text)
    assert depth - 12 <= filled.tokens <= depth and not filled.repeated
    assert builtin_document()[:200] in filled.text  # the built-in document, from its start


def test_a_short_document_is_repeated_and_said_so(count_tokens: Callable[[str], int]) -> None:
    filled = fill_to_depth("Summarise.", 1000, count_tokens, "The lighthouse keeper counted ships. " * 5)
    assert filled.repeated and 988 <= filled.tokens <= 1000


def test_a_depth_below_the_request_leaves_it_alone(count_tokens: Callable[[str], int]) -> None:
    filled = fill_to_depth("Summarise the text.", 5, count_tokens)
    assert filled.text == "Summarise the text." and filled.tokens == count_tokens("Summarise the text.")


def test_a_document_file_that_cannot_be_used_is_one_clear_error(tmp_path: Path) -> None:
    for content, said in ((b"", "empty"), (b"\xff\xfe\x00bad", "not UTF-8")):
        (tmp_path / "doc.txt").write_bytes(content)
        with pytest.raises(InputError, match=said):
            read_document(str(tmp_path / "doc.txt"))
    with pytest.raises(InputError, match="no such file"):
        read_document(str(tmp_path / "missing.txt"))
    with pytest.raises(InputError, match="folder"):
        read_document(str(tmp_path))
