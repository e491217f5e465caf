from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="Usage")


@_attrs_define
class Usage:
    """What a tenant holds now, counted as the quota counts.

    Attributes:
        cpu_millis (str | Unset): Cpu of live sandboxes.
        memory_mib (str | Unset): Memory of live sandboxes.
        sandboxes (str | Unset): Sandboxes not deleted.
    """

    cpu_millis: str | Unset = UNSET
    memory_mib: str | Unset = UNSET
    sandboxes: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        cpu_millis = self.cpu_millis

        memory_mib = self.memory_mib

        sandboxes = self.sandboxes

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if cpu_millis is not UNSET:
            field_dict["cpuMillis"] = cpu_millis
        if memory_mib is not UNSET:
            field_dict["memoryMib"] = memory_mib
        if sandboxes is not UNSET:
            field_dict["sandboxes"] = sandboxes

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        cpu_millis = d.pop("cpuMillis", UNSET)

        memory_mib = d.pop("memoryMib", UNSET)

        sandboxes = d.pop("sandboxes", UNSET)

        usage = cls(
            cpu_millis=cpu_millis,
            memory_mib=memory_mib,
            sandboxes=sandboxes,
        )

        usage.additional_properties = d
        return usage

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
