"""The device a speed prediction is for, as the speed model needs it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Hardware:
    """Peak memory bandwidth (GB/s), memory (GiB, None when not known), the vendor (which
    efficiency applies; "" for a device given only by numbers) and where the numbers come
    from (a GPU table row's source, ``--bandwidth``, or a detection command)."""

    name: str
    bandwidth_gbs: float
    memory_gib: float | None
    vendor: str = ""
    source: str = ""
