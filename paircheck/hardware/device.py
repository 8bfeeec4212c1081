"""The device a speed prediction is for, as the speed model needs it."""

from __future__ import annotations

from dataclasses import dataclass

# The backend classes whose verification costs differ (speed.roofline), and the class of each
# vendor's GPUs: llama.cpp's CUDA, Metal, and ROCm or Vulkan on AMD and Intel; "" is a device
# given only by --bandwidth, which takes the roofline's default.
BACKENDS = ("cuda", "metal", "rocm/vulkan", "cpu")
BACKEND_OF_VENDOR = {"nvidia": "cuda", "apple": "metal", "amd": "rocm/vulkan", "intel": "rocm/vulkan", "cpu": "cpu"}


def backend_of(vendor: str) -> str:
    return BACKEND_OF_VENDOR.get(vendor, "")


@dataclass(frozen=True)
class Hardware:
    """Peak memory bandwidth (GB/s), memory (GiB, None when not known), the vendor (which
    efficiency applies; "" for a device given only by numbers), where the numbers come
    from (a GPU table row's source, ``--bandwidth``, or a detection command), and the backend
    class llama.cpp runs on it (``cuda``, ``metal``, ``rocm/vulkan``, ``cpu``; "" for the
    vendor's, ``backend_of``)."""

    name: str
    bandwidth_gbs: float
    memory_gib: float | None
    vendor: str = ""
    source: str = ""
    backend_class: str = ""

    @property
    def backend(self) -> str:
        return self.backend_class or backend_of(self.vendor)
