from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.process_info import ProcessInfo


T = TypeVar("T", bound="ListProcessesResponse")


@_attrs_define
class ListProcessesResponse:
    """Response of ListProcesses.

    Attributes:
        processes (list[ProcessInfo] | Unset): The processes.
    """

    processes: list[ProcessInfo] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        processes: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.processes, Unset):
            processes = []
            for processes_item_data in self.processes:
                processes_item = processes_item_data.to_dict()
                processes.append(processes_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if processes is not UNSET:
            field_dict["processes"] = processes

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.process_info import ProcessInfo  # noqa: PLC0415

        d = dict(src_dict)
        _processes = d.pop("processes", UNSET)
        processes: list[ProcessInfo] | Unset = UNSET
        if _processes is not UNSET:
            processes = []
            for processes_item_data in _processes:
                processes_item = ProcessInfo.from_dict(processes_item_data)

                processes.append(processes_item)

        list_processes_response = cls(
            processes=processes,
        )

        list_processes_response.additional_properties = d
        return list_processes_response

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
