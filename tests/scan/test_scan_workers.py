"""A cold scan reads its files in forked workers (issue 50, item 12): the same ranking, every
file read once, in a worker; the answers in order; a worker's failure is the scan's to say; no
worker outlives the scan, however it ends."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from paircheck.scan import MAX_JOBS, default_jobs, rank
from paircheck.scan.discover import Candidate
from paircheck.scan.workers import forked_map

REPO = Path(__file__).resolve().parents[2]
PARENT = os.getpid()


def _pid_of(x: int) -> tuple[int, int]:
    return x * x, os.getpid()


def test_answers_come_back_in_order_each_from_its_worker() -> None:
    answers = list(forked_map(_pid_of, list(range(11)), 3))
    assert [a for a, _ in answers] == [x * x for x in range(11)]
    pids = [pid for _, pid in answers]
    assert os.getpid() not in pids
    # Item i is worker i % 3's: three workers, each answering its own items.
    assert len(set(pids)) == 3 and all(pids[i] == pids[i % 3] for i in range(11))
    for pid in set(pids):  # every worker was waited for
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


def _fails_at_five(x: int) -> int:
    if x == 5:
        raise ValueError("five")
    return x


def test_an_exception_in_a_worker_is_raised_at_its_item() -> None:
    seen: list[int] = []
    with pytest.raises(ValueError, match="five"):
        for x in forked_map(_fails_at_five, list(range(9)), 2):
            seen.append(x)
    assert seen == [0, 1, 2, 3, 4]


def _dies_at_four(x: int) -> tuple[int, int]:
    if x == 4 and os.getpid() != PARENT:
        os._exit(9)  # as the out-of-memory killer would end it
    return x, os.getpid()


def test_the_items_of_a_worker_that_died_are_read_by_the_scan_itself() -> None:
    answers = list(forked_map(_dies_at_four, list(range(8)), 2))
    assert [x for x, _ in answers] == list(range(8))
    # Worker 0 had 0, 2, 4, 6 and died at 4: 4 and 6 were read here; worker 1's in worker 1.
    by = {x: pid for x, pid in answers}
    assert by[4] == by[6] == os.getpid() and by[0] == by[2] != os.getpid()
    assert by[1] == by[3] == by[5] == by[7] not in (os.getpid(), by[0])


_SLOW_MAP = """
import os, sys, time
sys.path.insert(0, {repo!r})
from paircheck.scan.workers import forked_map

def slow(x):
    time.sleep(0.3)
    return os.getpid()

for pid in forked_map(slow, list(range(40)), 2):
    print(pid, flush=True)
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers are forks, on Linux only")
@pytest.mark.parametrize("how", ["SIGKILL", "SIGTERM"])
def test_no_worker_outlives_a_scan_that_is_killed(how: str) -> None:
    proc = subprocess.Popen([sys.executable, "-c", _SLOW_MAP.format(repo=str(REPO))], stdout=subprocess.PIPE,
                            text=True, start_new_session=True)
    assert proc.stdout is not None
    workers = {int(proc.stdout.readline()), int(proc.stdout.readline())}  # items 0 and 1: both workers
    assert len(workers) == 2 and all(_alive(pid) for pid in workers)
    os.kill(proc.pid, getattr(signal, how))
    proc.wait(timeout=30)
    deadline = time.monotonic() + 20
    while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.1)  # a worker ends at its next answer, when it finds its pipe closed
    left = [pid for pid in workers if _alive(pid)]
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, f"workers left running after the scan was killed with {how}"


def test_default_jobs_is_this_machines_cpus_at_most_four() -> None:
    jobs = default_jobs()
    if sys.platform.startswith("linux"):
        assert jobs == max(1, min(MAX_JOBS, len(os.sched_getaffinity(0))))
    else:
        assert jobs == 1


@pytest.fixture
def models(tmp_path: Path, real_vocab: Callable[[str], Path]) -> tuple[Path, Path]:
    """A target and a folder of every kind of candidate: usable, refused, cut, a copy of the
    target, a text file named .gguf."""
    target = tmp_path / "target" / "qwen2.gguf"
    target.parent.mkdir()
    shutil.copyfile(real_vocab("qwen2"), target)
    folder = tmp_path / "models"
    folder.mkdir()
    for name in ("qwen35", "llama-spm", "phi-3", "gpt-2", "baichuan", "bert-bge", "deepseek-coder"):
        shutil.copyfile(real_vocab(name), folder / f"{name}.gguf")
    shutil.copyfile(target, folder / "copy-of-target.gguf")
    (folder / "cut.gguf").write_bytes(real_vocab("phi-3").read_bytes()[:20])
    (folder / "notes.gguf").write_text("not a model\n")
    return target, folder


_RANK_IN_WORKERS = """
import json, os, sys
sys.path.insert(0, {repo!r})
from dataclasses import asdict
from paircheck.pipeline import describe
from paircheck.scan import rank
from paircheck.scan.discover import discover

log = sys.argv[1]

def describer(location):
    with open(log, "a", encoding="utf-8") as handle:
        handle.write(json.dumps([os.getpid(), location]) + "\\n")
    return describe(location)

result = rank(describe(sys.argv[2]), discover([sys.argv[3]], False), describer=describer, jobs=int(sys.argv[4]))
print(json.dumps({{"pid": os.getpid(), "candidates": [asdict(c) for c in result.candidates],
                  "unreadable": [asdict(u) for u in result.unreadable], "same": result.skipped_same_model}}))
"""


def _rank(target: Path, folder: Path, jobs: int, log: Path) -> tuple[dict[str, object], list[tuple[int, str]]]:
    # In a process of its own: this test's process may run other threads, and a scan forks
    # only from a process with none.
    proc = subprocess.run(
        [sys.executable, "-c", _RANK_IN_WORKERS.format(repo=str(REPO)), str(log), str(target), str(folder), str(jobs)],
        capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    reads = [tuple(json.loads(line)) for line in log.read_text(encoding="utf-8").splitlines()]
    return json.loads(proc.stdout), reads  # type: ignore[return-value]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers are forks, on Linux only")
def test_a_scan_in_workers_ranks_as_one_in_this_process(models: tuple[Path, Path], tmp_path: Path) -> None:
    target, folder = models
    one, read_here = _rank(target, folder, 1, tmp_path / "one.log")
    two, read_in_workers = _rank(target, folder, 2, tmp_path / "two.log")
    assert two["candidates"] == one["candidates"] and two["unreadable"] == one["unreadable"]
    assert two["same"] == one["same"] == [str(folder / "copy-of-target.gguf")]
    assert [u["location"] for u in one["unreadable"]] == [str(folder / n) for n in ("cut.gguf", "notes.gguf")]
    # Every file read once; with one job in the scan's process, with two in two workers.
    files = sorted(str(p) for p in folder.iterdir())
    assert sorted(loc for _, loc in read_here) == sorted(loc for _, loc in read_in_workers) == files
    assert {pid for pid, _ in read_here} == {one["pid"]}
    assert len({pid for pid, _ in read_in_workers}) == 2 and two["pid"] not in {pid for pid, _ in read_in_workers}


def test_few_files_are_read_in_this_process(models: tuple[Path, Path], tmp_path: Path) -> None:
    target, folder = models
    from paircheck.pipeline import describe

    pids: list[int] = []

    def describer(location: str):  # type: ignore[no-untyped-def]
        pids.append(os.getpid())
        return describe(location)

    few = [Candidate(str(folder / n)) for n in ("qwen35.gguf", "gpt-2.gguf", "phi-3.gguf")]
    result = rank(describe(str(target)), few, describer=describer, jobs=4)
    assert len(result.candidates) == 3 and pids == [os.getpid()] * 3


def test_jobs_is_at_least_one(models: tuple[Path, Path]) -> None:
    target, folder = models
    proc = subprocess.run([sys.executable, "-m", "paircheck", "scan", "-j", "0", "--no-default-dirs", str(target),
                           str(folder)], capture_output=True, text=True, timeout=120, check=False, cwd=REPO)
    assert proc.returncode == 2 and proc.stdout == ""
    assert len(proc.stderr.strip().splitlines()) == 1 and "'-j' / '--jobs'" in proc.stderr, proc.stderr


def test_the_cli_ranks_the_same_with_any_number_of_jobs(models: tuple[Path, Path]) -> None:
    target, folder = models
    outputs = []
    for jobs in ("1", "3"):
        proc = subprocess.run([sys.executable, "-m", "paircheck", "scan", "--json", "--no-cache", "-j", jobs,
                               "--no-default-dirs", str(target), str(folder)], capture_output=True, text=True,
                              timeout=300, check=False, cwd=REPO)
        assert proc.returncode == 0 and proc.stderr == "", proc.stderr
        outputs.append(proc.stdout)
    assert outputs[0] == outputs[1]
    assert len(json.loads(outputs[0])["candidates"]) == 7

