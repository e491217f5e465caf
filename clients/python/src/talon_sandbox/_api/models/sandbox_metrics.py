from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="SandboxMetrics")


@_attrs_define
class SandboxMetrics:
    """What a sandbox uses at one moment.

    Attributes:
        cpu_count (int | Unset): The cores the sandbox may use (its cpu_millis / 1000, rounded up).
        cpu_time (str | Unset): Total cpu time used since the sandbox started.
        cpu_used_pct (float | Unset): Cpu in use as a percentage of `cpu_count` cores, averaged over the
             window since the previous reading (at least 100 ms, at most 10 s).
        disk_total_bytes (str | Unset): The disk limit.
        disk_used_bytes (str | Unset): Bytes written to the sandbox's disk (root's writable layer and
             workspace).
        mem_total_bytes (str | Unset): The memory limit.
        mem_used_bytes (str | Unset): Memory in use, page cache included, as its cgroup counts it.
        sample_time (datetime.datetime | Unset): When the reading was taken.
    """

    cpu_count: int | Unset = UNSET
    cpu_time: str | Unset = UNSET
    cpu_used_pct: float | Unset = UNSET
    disk_total_bytes: str | Unset = UNSET
    disk_used_bytes: str | Unset = UNSET
    mem_total_bytes: str | Unset = UNSET
    mem_used_bytes: str | Unset = UNSET
    sample_time: datetime.datetime | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        cpu_count = self.cpu_count

        cpu_time = self.cpu_time

        cpu_used_pct = self.cpu_used_pct

        disk_total_bytes = self.disk_total_bytes

        disk_used_bytes = self.disk_used_bytes

        mem_total_bytes = self.mem_total_bytes

        mem_used_bytes = self.mem_used_bytes

        sample_time: str | Unset = UNSET
        if not isinstance(self.sample_time, Unset):
            sample_time = self.sample_time.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if cpu_count is not UNSET:
            field_dict["cpuCount"] = cpu_count
        if cpu_time is not UNSET:
            field_dict["cpuTime"] = cpu_time
        if cpu_used_pct is not UNSET:
            field_dict["cpuUsedPct"] = cpu_used_pct
        if disk_total_bytes is not UNSET:
            field_dict["diskTotalBytes"] = disk_total_bytes
        if disk_used_bytes is not UNSET:
            field_dict["diskUsedBytes"] = disk_used_bytes
        if mem_total_bytes is not UNSET:
            field_dict["memTotalBytes"] = mem_total_bytes
        if mem_used_bytes is not UNSET:
            field_dict["memUsedBytes"] = mem_used_bytes
        if sample_time is not UNSET:
            field_dict["sampleTime"] = sample_time

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        cpu_count = d.pop("cpuCount", UNSET)

        cpu_time = d.pop("cpuTime", UNSET)

        cpu_used_pct = d.pop("cpuUsedPct", UNSET)

        disk_total_bytes = d.pop("diskTotalBytes", UNSET)

        disk_used_bytes = d.pop("diskUsedBytes", UNSET)

        mem_total_bytes = d.pop("memTotalBytes", UNSET)

        mem_used_bytes = d.pop("memUsedBytes", UNSET)

        _sample_time = d.pop("sampleTime", UNSET)
        sample_time: datetime.datetime | Unset
        if isinstance(_sample_time, Unset):
            sample_time = UNSET
        else:
            sample_time = datetime.datetime.fromisoformat(_sample_time)

        sandbox_metrics = cls(
            cpu_count=cpu_count,
            cpu_time=cpu_time,
            cpu_used_pct=cpu_used_pct,
            disk_total_bytes=disk_total_bytes,
            disk_used_bytes=disk_used_bytes,
            mem_total_bytes=mem_total_bytes,
            mem_used_bytes=mem_used_bytes,
            sample_time=sample_time,
        )

        sandbox_metrics.additional_properties = d
        return sandbox_metrics

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
