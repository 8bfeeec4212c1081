"""A scan's files read in forked worker processes, the answers back in order.

Reading a candidate is pure Python (the GGUF's token and merge arrays walked one string at a
time, its texts hashed): one core per file. A cold scan of a folder of models reads them
``jobs`` at a time, each worker a fork of the scan's process, so it has the target, its facts
and the registry without reading or copying anything; only each file's summary comes back,
pickled through a pipe.

Item ``i`` goes to worker ``i % jobs``, and each worker answers its items in order, so the
answers are read back in the items' order from one pipe after another: no queue, no thread,
no lock. A worker holds one file's metadata at a time. It never outlives the scan: if the scan
process ends (Ctrl-C, a signal, killed), the worker's next answer finds its pipe closed and the
worker ends; on Ctrl-C the scan stops its workers itself. A worker that dies (the kernel's
out-of-memory killer) leaves its items to the scan's own process.

Only on Linux, and only from a process with no other thread (a fork copies only the thread
that forks; a lock another thread held would stay held in the worker): otherwise
:func:`can_fork` is False and the caller reads the files itself.
"""

from __future__ import annotations

import gc
import os
import pickle
import signal
import struct
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, BinaryIO, TypeVar

T = TypeVar("T")
R = TypeVar("R")

_HEADER = struct.Struct("<Q")


def can_fork() -> bool:
    """Whether :func:`forked_map` may fork here: Linux, and no thread but this one."""
    return sys.platform.startswith("linux") and hasattr(os, "fork") and threading.active_count() == 1


def forked_map(fn: Callable[[T], R], items: Sequence[T], jobs: int) -> Iterator[R]:
    """``fn(item)`` of each item, in order, computed in ``jobs`` forked workers.

    An exception ``fn`` raises in a worker is raised here, at its item. The items of a worker
    that could not be started, or died, are computed here. The caller checks :func:`can_fork`
    first. Closing the iterator early (an exception, Ctrl-C) stops the workers and waits for
    them."""
    streams: list[BinaryIO | None] = []  # worker k's pipe, None when its items are read here
    pids: list[int] = []
    finished = False
    gc.freeze()  # the workers' collections leave the inherited objects (and their pages) alone
    try:
        for k in range(jobs):
            try:
                read_fd, write_fd = os.pipe()
            except OSError:  # out of file descriptors: this worker's items are read here
                streams.append(None)
                continue
            try:
                pid = os.fork()
            except OSError:  # out of processes or memory: likewise
                os.close(read_fd)
                os.close(write_fd)
                streams.append(None)
                continue
            if pid == 0:  # the worker: never returns to the caller's stack
                _work(fn, items[k::jobs], read_fd, write_fd, streams)
            os.close(write_fd)
            pids.append(pid)
            streams.append(os.fdopen(read_fd, "rb"))
    except BaseException:
        _stop(streams, pids, finished)
        raise
    finally:
        gc.unfreeze()
    try:
        for index, item in enumerate(items):
            stream = streams[index % jobs]
            answer = _receive(stream) if stream is not None else None
            if answer is None:  # no worker, or it died: its items are read here from now on
                if stream is not None:
                    stream.close()
                    streams[index % jobs] = None
                yield fn(item)
                continue
            kind, value = answer
            if kind == "raise":
                raise value
            yield value
        finished = True
    finally:
        _stop(streams, pids, finished)


def _work(fn: Callable[[T], R], mine: Sequence[T], read_fd: int, write_fd: int,
          others: list[BinaryIO | None]) -> None:
    """A worker's life: answer each of ``mine`` in order, then exit without running anything
    of the parent's (no atexit, no buffered output flushed twice)."""
    code = 1
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the scan's to handle
        os.close(read_fd)
        for stream in others:  # the read ends of the workers forked before this one
            if stream is not None:
                os.close(stream.fileno())
        with os.fdopen(write_fd, "wb") as out:
            for item in mine:
                try:
                    answer: tuple[str, Any] = ("value", fn(item))
                except Exception as exc:  # a bug, raised in the scan at this item
                    answer = ("raise", exc)
                try:
                    data = pickle.dumps(answer, pickle.HIGHEST_PROTOCOL)
                except Exception:  # an exception that does not pickle: its type and words
                    data = pickle.dumps(("raise", RuntimeError(f"{type(answer[1]).__name__}: {answer[1]}")))
                out.write(_HEADER.pack(len(data)) + data)
                out.flush()  # the scan ended if this fails (BrokenPipeError): so does the worker
                if answer[0] == "raise":
                    break
        code = 0
    finally:
        os._exit(code)


def _receive(stream: BinaryIO) -> tuple[str, Any] | None:
    """The next answer of a worker, or None when it ended without one."""
    head = stream.read(_HEADER.size)
    if len(head) < _HEADER.size:
        return None
    (size,) = _HEADER.unpack(head)
    data = stream.read(size)
    if len(data) < size:
        return None
    answer: tuple[str, Any] = pickle.loads(data)  # from our own fork, never from a file
    return answer


def _stop(streams: list[BinaryIO | None], pids: list[int], finished: bool) -> None:
    """Close the pipes and wait for every worker; unless every answer was read (an interrupted
    scan, an error), stop those still running first."""
    for stream in streams:
        if stream is not None:
            stream.close()
    for pid in pids:
        try:
            if not finished and os.waitpid(pid, os.WNOHANG)[0] == 0:
                os.kill(pid, signal.SIGTERM)
            os.waitpid(pid, 0)
        except (ChildProcessError, ProcessLookupError):
            pass
