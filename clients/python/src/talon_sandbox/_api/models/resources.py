from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="Resources")


@_attrs_define
class Resources:
    """Compute resources of one sandbox. Zero means "the server's default".

    Attributes:
        cpu_millis (str | Unset): CPU in thousandths of a core (1000 = one core).
        disk_mib (str | Unset): Writable disk for the sandbox's upper layer and workspace, in MiB.
        max_pids (str | Unset): Maximum number of processes and threads.
        memory_mib (str | Unset): Memory limit in MiB.
    """

    cpu_millis: str | Unset = UNSET
    disk_mib: str | Unset = UNSET
    max_pids: str | Unset = UNSET
    memory_mib: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        cpu_millis = self.cpu_millis

        disk_mib = self.disk_mib

        max_pids = self.max_pids

        memory_mib = self.memory_mib

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if cpu_millis is not UNSET:
            field_dict["cpuMillis"] = cpu_millis
        if disk_mib is not UNSET:
            field_dict["diskMib"] = disk_mib
        if max_pids is not UNSET:
            field_dict["maxPids"] = max_pids
        if memory_mib is not UNSET:
            field_dict["memoryMib"] = memory_mib

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        cpu_millis = d.pop("cpuMillis", UNSET)

        disk_mib = d.pop("diskMib", UNSET)

        max_pids = d.pop("maxPids", UNSET)

        memory_mib = d.pop("memoryMib", UNSET)

        resources = cls(
            cpu_millis=cpu_millis,
            disk_mib=disk_mib,
            max_pids=max_pids,
            memory_mib=memory_mib,
        )

        resources.additional_properties = d
        return resources

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
