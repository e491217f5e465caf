from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="Quota")


@_attrs_define
class Quota:
    """Limits on what one tenant may hold at once. Zero means no sandboxes (or
    no cpu, no memory) at all; there is no "unlimited".

       Attributes:
           max_cpu_millis (str | Unset): Sum of the cpu of sandboxes that are not stopped, failed or deleted.
           max_memory_mib (str | Unset): Sum of their memory.
           max_sandboxes (str | Unset): Sandboxes that are not deleted.
    """

    max_cpu_millis: str | Unset = UNSET
    max_memory_mib: str | Unset = UNSET
    max_sandboxes: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        max_cpu_millis = self.max_cpu_millis

        max_memory_mib = self.max_memory_mib

        max_sandboxes = self.max_sandboxes

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if max_cpu_millis is not UNSET:
            field_dict["maxCpuMillis"] = max_cpu_millis
        if max_memory_mib is not UNSET:
            field_dict["maxMemoryMib"] = max_memory_mib
        if max_sandboxes is not UNSET:
            field_dict["maxSandboxes"] = max_sandboxes

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        max_cpu_millis = d.pop("maxCpuMillis", UNSET)

        max_memory_mib = d.pop("maxMemoryMib", UNSET)

        max_sandboxes = d.pop("maxSandboxes", UNSET)

        quota = cls(
            max_cpu_millis=max_cpu_millis,
            max_memory_mib=max_memory_mib,
            max_sandboxes=max_sandboxes,
        )

        quota.additional_properties = d
        return quota

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
