from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="Volume")


@_attrs_define
class Volume:
    """A volume.

    Attributes:
        create_time (datetime.datetime | Unset): Output only.
        name (str | Unset): Unique in the tenant: 1 to 63 of [a-z0-9-], starting with a letter or
             digit.
        sandbox_id (str | Unset): Output only: the sandbox that mounts it, if any (until that sandbox
             is deleted).
        size_mib (str | Unset): Its size; the server's default (--volume-default-mib) when unset,
             at most --volume-max-mib.
        volume_id (str | Unset): Output only: `vol_` and 26 characters.
    """

    create_time: datetime.datetime | Unset = UNSET
    name: str | Unset = UNSET
    sandbox_id: str | Unset = UNSET
    size_mib: str | Unset = UNSET
    volume_id: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        create_time: str | Unset = UNSET
        if not isinstance(self.create_time, Unset):
            create_time = self.create_time.isoformat()

        name = self.name

        sandbox_id = self.sandbox_id

        size_mib = self.size_mib

        volume_id = self.volume_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if create_time is not UNSET:
            field_dict["createTime"] = create_time
        if name is not UNSET:
            field_dict["name"] = name
        if sandbox_id is not UNSET:
            field_dict["sandboxId"] = sandbox_id
        if size_mib is not UNSET:
            field_dict["sizeMib"] = size_mib
        if volume_id is not UNSET:
            field_dict["volumeId"] = volume_id

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        _create_time = d.pop("createTime", UNSET)
        create_time: datetime.datetime | Unset
        if isinstance(_create_time, Unset):
            create_time = UNSET
        else:
            create_time = datetime.datetime.fromisoformat(_create_time)

        name = d.pop("name", UNSET)

        sandbox_id = d.pop("sandboxId", UNSET)

        size_mib = d.pop("sizeMib", UNSET)

        volume_id = d.pop("volumeId", UNSET)

        volume = cls(
            create_time=create_time,
            name=name,
            sandbox_id=sandbox_id,
            size_mib=size_mib,
            volume_id=volume_id,
        )

        volume.additional_properties = d
        return volume

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
