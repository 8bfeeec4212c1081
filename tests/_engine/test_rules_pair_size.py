"""PW001 (paircheck._engine.pair_size) on in-memory descriptions: weight bytes from tensor
infos, parameter counts from size labels, the same-file and swapped cases, every message.
File-free, for the mutation run (engine.pair_size)."""

from __future__ import annotations

import pytest
from rule_desc import F32, desc

from paircheck._engine import pair_size as P
from paircheck.findings import WARN
from paircheck.model import ModelDescription, TensorInfo


def weights(name: str, n: int, **kw: object) -> ModelDescription:
    """A model reading ``4 * n`` bytes per token (one float32 tensor of n elements)."""
    return desc(name, tensor_list=[TensorInfo("blk.0.ffn_up.weight", (n,), F32, 0),
                                   TensorInfo("output.weight", (1,), F32, 0)], **kw)  # type: ignore[arg-type]


def test_same_file() -> None:
    found = P.size_finding(100, 100, True)
    assert found is not None and (found.code, found.name, found.status, found.fix) == ("PW001", "draft_size", WARN,
                                                                                       P.SIZE_FIX)
    assert found.message == ("target and draft are the same file: every draft token costs a full target pass, so "
                             "this is slower")
    assert found.details == {"same_file": True}
    assert P.size_finding(None, None, True) is not None


def test_same_file_by_path_or_location() -> None:
    a, b = desc("a.gguf"), desc("a.gguf")
    assert P.same_file(a, b) and not P.same_file(a, desc("b.gguf"))
    a.resolved_path, b.resolved_path = "/m/x/../a.gguf", "/m/a.gguf"
    assert P.same_file(a, b)
    b.resolved_path = "/m/b.gguf"
    assert not P.same_file(a, b)
    c = desc("a.gguf")
    c.resolved_path = "/m/b.gguf"
    assert P.same_file(desc("a.gguf"), c) and P.same_file(c, desc("a.gguf"))  # one path only: the names compare
    assert not P.same_file(desc("z.gguf"), c)


def test_weight_ratios() -> None:
    assert P.size_finding(None, 10, False) is None and P.size_finding(0, 10, False) is None
    assert P.size_finding(100, None, False) is None
    assert P.size_finding(100, 30, False) is None  # exactly 30%: not above
    share = P.size_finding(100, 31, False)
    assert share is not None and share.message == ("the draft reads 31% of the target's weight bytes per token (cost "
                                                   "ratio above 30%): little or no speedup is likely")
    assert share.details == {"basis": "weight_bytes_per_token", "target_bytes_per_token": 100,
                             "draft_bytes_per_token": 31, "cost_ratio": 0.31}
    assert share.fix == P.SIZE_FIX and (share.code, share.name, share.status) == ("PW001", "draft_size", WARN)
    equal = P.size_finding(100, 100, False)  # 1.0x: not larger, but far above 30%
    assert equal is not None and equal.message.endswith("little or no speedup is likely")
    larger = P.size_finding(100, 250, False)
    assert larger is not None and larger.message == ("the draft reads 2.50x the target's weight bytes per token: it "
                                                     "is larger than the target, so speculative decoding will be "
                                                     "slower")
    assert larger.fix == P.SIZE_FIX and (larger.code, larger.name, larger.status) == ("PW001", "draft_size", WARN)
    assert P.size_finding(100, 20, False, threshold=0.1) is not None
    third = P.size_finding(3, 1, False)
    assert third is not None and third.details["cost_ratio"] == 0.3333  # rounded to 4 places


def test_file_basis() -> None:
    share = P.size_finding(100, 40, False, basis="file")
    assert share is not None and share.details == {"basis": "file_size", "target_file_bytes": 100,
                                                   "draft_file_bytes": 40, "size_ratio": 0.4}
    assert share.message == ("the draft file is 40% of the target file's size (above 30%): little or no speedup is "
                             "likely")
    third = P.size_finding(3, 1, False, basis="file")
    assert third is not None and third.details["size_ratio"] == 0.3333
    larger = P.size_finding(100, 150, False, basis="file")
    assert larger is not None and larger.message.startswith("the draft file is 1.50x the size of the target file: it "
                                                            "is larger than the target")


def test_parameter_ratios() -> None:
    assert P.parameter_finding((0, "x"), (5, "y")) is None
    assert P.parameter_finding((-1, "x"), (5, "y")) is None
    assert P.parameter_finding((10_000_000_000, "a"), (3_000_000_000, "b")) is None  # 30%
    share = P.parameter_finding((7_000_000_000, "general.size_label 7B"), (3_000_000_000, "general.size_label 3B"))
    assert share is not None and share.message == (
        "the draft has 3.00B parameters (general.size_label 3B), the target 7.00B (general.size_label 7B): 43% of "
        "the target's (above 30%): little or no speedup is likely")
    assert share.details == {"basis": "parameters", "target_parameters": 7_000_000_000,
                             "draft_parameters": 3_000_000_000, "target_parameters_from": "general.size_label 7B",
                             "draft_parameters_from": "general.size_label 3B", "parameter_ratio": 0.4286}
    assert share.fix == P.SIZE_FIX and share.status == WARN and (share.code, share.name) == ("PW001", "draft_size")
    larger = P.parameter_finding((500_000_000, "a"), (14_000_000_000, "b"))
    assert larger is not None and larger.message == (
        "the draft has 14B parameters (b), the target 0.50B (a): the draft is larger than the target, so speculative "
        "decoding will be slower")
    assert larger.fix == P.SIZE_FIX and larger.status == WARN and (larger.code, larger.name) == ("PW001", "draft_size")
    equal = P.parameter_finding((10, "a"), (10, "b"))  # equal: not larger, but 100% is above 30%
    assert equal is not None and equal.message.endswith(": 100% of the target's (above 30%): little or no speedup "
                                                        "is likely")
    between = P.parameter_finding((10, "a"), (15, "b"))  # 1.5x: larger
    assert between is not None and between.message.endswith("the draft is larger than the target, so speculative "
                                                            "decoding will be slower")
    one = P.parameter_finding((1, "a"), (1, "b"))  # a count of 1 is still a count
    assert one is not None and one.details["parameter_ratio"] == 1.0
    assert P.parameter_finding((100, "a"), (20, "b"), threshold=0.1) is not None


@pytest.mark.parametrize(("n", "shown"), [(9_990_000_000, "9.99B"), (10_000_000_000, "10B"), (14_400_000_000, "14B"),
                                          (500_000_000, "0.50B"),
                                          # on a rounding edge: divided by exactly 1e9
                                          (1_235_000_000, "1.24B"), (15_500_000_000, "16B")])
def test_billions(n: int, shown: str) -> None:
    assert P._billions(n) == shown


def test_size_warning_from_tensor_infos() -> None:
    target, draft = weights("t.gguf", 1000), weights("d.gguf", 400)
    found = P.size_warning(target, draft)
    assert found is not None and found.details["cost_ratio"] == round(1604 / 4004, 4)
    assert P.size_warning(target, weights("d.gguf", 100)) is None
    assert P.size_warning(target, draft, threshold=0.5) is None
    same = P.size_warning(target, weights("t.gguf", 1000))
    assert same is not None and same.details == {"same_file": True}
    # only one side has tensor infos: the parameter counts (here: none) decide
    assert P.size_warning(target, desc("d.gguf")) is None
    same_no_tensors = P.size_warning(desc("x.gguf"), desc("x.gguf"))
    assert same_no_tensors is not None and same_no_tensors.details == {"same_file": True}


def test_size_warning_from_labels() -> None:
    t, d = desc("t.gguf", size_label="7B"), desc("d.gguf", size_label="3B")
    found = P.size_warning(t, d)
    assert found is not None and found.details["basis"] == "parameters"
    assert P.size_warning(t, d, threshold=0.5) is None
    assert P.size_warning(t, desc("d.gguf")) is None and P.size_warning(desc("t.gguf"), d) is None
    mixed = P.size_warning(weights("t.gguf", 1000), desc("d.gguf", size_label="1K"))
    assert mixed is not None and mixed.details["target_parameters"] == 1001  # tensor infos' elements


def test_swapped() -> None:
    target, draft = desc("small.gguf", size_label="0.5B"), desc("big model.gguf", size_label="14B")
    found = P.size_warning(target, draft)
    assert found is not None
    assert found.details["swapped"] == "paircheck 'big model.gguf' small.gguf" == found.fix
    assert found.message.endswith("; the draft is 28x the target: the two look swapped (the target comes first)")
    assert found.message.startswith("the draft has 14B parameters")
    assert (found.code, found.name, found.status) == ("PW001", "draft_size", WARN)
    four = P.size_warning(desc("t", size_label="1B"), desc("d", size_label="4B"))
    assert four is not None and "swapped" in four.details  # 4x exactly: swapped
    under = P.size_warning(desc("t", size_label="1B"), desc("d", size_label="3.9B"))
    assert under is not None and "swapped" not in under.details and under.fix == P.SIZE_FIX
    by_bytes = P.size_warning(weights("t.gguf", 100), weights("d.gguf", 1000))
    assert by_bytes is not None and by_bytes.details["swapped"] == "paircheck d.gguf t.gguf"
    by_file = P.swapped(P.size_finding(100, 500, False, basis="file"), desc("t"), desc("d"))
    assert by_file is not None and by_file.details["swapped"] == "paircheck d t"
    assert P.swapped(None, desc("t"), desc("d")) is None
    same = P.size_finding(1, 1, True)
    assert P.swapped(same, desc("t"), desc("d")) is same  # no ratio: unchanged
