"""What the GPU was running at while a bench case was timed: its SM clock against the clock it can reach, its
power limit and temperature, read from NVML (the driver's library, loaded with ctypes: no package needed).
A throttled clock or a lowered power limit explains a slow figure better than any kernel change, so the bench
records them beside its times. Every figure is None where NVML or the call is missing (a CPU, a driver without
it)."""

from __future__ import annotations

import ctypes
from dataclasses import asdict, dataclass
from typing import Any

NVML_CLOCK_SM = 1
NVML_TEMPERATURE_GPU = 0


@dataclass(frozen=True)
class GpuState:
    sm_clock_mhz: int | None = None
    max_sm_clock_mhz: int | None = None
    power_limit_w: float | None = None
    power_draw_w: float | None = None
    temperature_c: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _library() -> Any:
    for name in ("libnvidia-ml.so.1", "libnvidia-ml.so", "nvml.dll"):
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
    return None


def _uint(nvml: Any, function: str, *args: Any) -> int | None:
    value = ctypes.c_uint()
    try:
        status = getattr(nvml, function)(*args, ctypes.byref(value))
    except AttributeError:
        return None
    return value.value if status == 0 else None


def read(pci_bus_id: str | None, index: int = 0) -> GpuState:
    """The state of the GPU at ``pci_bus_id`` ("00000000:19:00.0", from torch's device properties), or where
    that is unknown, NVML's device ``index``."""
    nvml = _library()
    if nvml is None or nvml.nvmlInit_v2() != 0:
        return GpuState()
    try:
        handle = ctypes.c_void_p()
        found = (
            nvml.nvmlDeviceGetHandleByPciBusId_v2(pci_bus_id.encode(), ctypes.byref(handle))
            if pci_bus_id
            else nvml.nvmlDeviceGetHandleByIndex_v2(ctypes.c_uint(index), ctypes.byref(handle))
        )
        if found != 0:
            return GpuState()
        limit_mw = _uint(nvml, "nvmlDeviceGetPowerManagementLimit", handle)
        draw_mw = _uint(nvml, "nvmlDeviceGetPowerUsage", handle)
        return GpuState(
            sm_clock_mhz=_uint(nvml, "nvmlDeviceGetClockInfo", handle, NVML_CLOCK_SM),
            max_sm_clock_mhz=_uint(nvml, "nvmlDeviceGetMaxClockInfo", handle, NVML_CLOCK_SM),
            power_limit_w=limit_mw / 1000 if limit_mw is not None else None,
            power_draw_w=draw_mw / 1000 if draw_mw is not None else None,
            temperature_c=_uint(nvml, "nvmlDeviceGetTemperature", handle, NVML_TEMPERATURE_GPU),
        )
    finally:
        nvml.nvmlShutdown()


def current(torch: Any) -> GpuState:
    """The state of torch's current CUDA device."""
    index = torch.cuda.current_device()
    props = torch.cuda.get_device_properties(index)
    parts = [getattr(props, name, None) for name in ("pci_domain_id", "pci_bus_id", "pci_device_id")]
    bus = f"{parts[0]:08x}:{parts[1]:02x}:{parts[2]:02x}.0" if None not in parts else None
    return read(bus, index)
