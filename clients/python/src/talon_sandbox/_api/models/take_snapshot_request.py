from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="TakeSnapshotRequest")


@_attrs_define
class TakeSnapshotRequest:
    """Request for TakeSnapshot: CreateSnapshot's fields.

    Attributes:
        memory (bool | Unset): Refused (FAILED_PRECONDITION), as in CreateSnapshot.
        name (str | Unset): The snapshot's name; one is made from the sandbox's id and the time
             when empty.
        sandbox_id (str | Unset): The sandbox, running or paused.
    """

    memory: bool | Unset = UNSET
    name: str | Unset = UNSET
    sandbox_id: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        memory = self.memory

        name = self.name

        sandbox_id = self.sandbox_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if memory is not UNSET:
            field_dict["memory"] = memory
        if name is not UNSET:
            field_dict["name"] = name
        if sandbox_id is not UNSET:
            field_dict["sandboxId"] = sandbox_id

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        memory = d.pop("memory", UNSET)

        name = d.pop("name", UNSET)

        sandbox_id = d.pop("sandboxId", UNSET)

        take_snapshot_request = cls(
            memory=memory,
            name=name,
            sandbox_id=sandbox_id,
        )

        take_snapshot_request.additional_properties = d
        return take_snapshot_request

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
