from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="Snapshot")


@_attrs_define
class Snapshot:
    """A copy of a sandbox's filesystem that new sandboxes start from.

    Attributes:
        create_time (datetime.datetime | Unset): Output only.
        frozen (str | Unset): Output only: how long the sandbox was frozen for the copy (zero when
             it was paused).
        image (str | Unset): Output only: the image that sandbox was created from.
        memory (bool | Unset): Whether it holds the sandbox's memory and processes: always false.
             Memory snapshots need CRIU, which does not work on this platform's
             supported kernels yet.
        name (str | Unset): Unique in the tenant; 1 to 128 letters, digits and ._-.
        sandbox_id (str | Unset): Output only: the sandbox it was taken from.
        size_bytes (str | Unset): Output only: bytes of file content it holds (what the storage quota
             counts).
        snapshot_id (str | Unset): Output only.
    """

    create_time: datetime.datetime | Unset = UNSET
    frozen: str | Unset = UNSET
    image: str | Unset = UNSET
    memory: bool | Unset = UNSET
    name: str | Unset = UNSET
    sandbox_id: str | Unset = UNSET
    size_bytes: str | Unset = UNSET
    snapshot_id: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        create_time: str | Unset = UNSET
        if not isinstance(self.create_time, Unset):
            create_time = self.create_time.isoformat()

        frozen = self.frozen

        image = self.image

        memory = self.memory

        name = self.name

        sandbox_id = self.sandbox_id

        size_bytes = self.size_bytes

        snapshot_id = self.snapshot_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if create_time is not UNSET:
            field_dict["createTime"] = create_time
        if frozen is not UNSET:
            field_dict["frozen"] = frozen
        if image is not UNSET:
            field_dict["image"] = image
        if memory is not UNSET:
            field_dict["memory"] = memory
        if name is not UNSET:
            field_dict["name"] = name
        if sandbox_id is not UNSET:
            field_dict["sandboxId"] = sandbox_id
        if size_bytes is not UNSET:
            field_dict["sizeBytes"] = size_bytes
        if snapshot_id is not UNSET:
            field_dict["snapshotId"] = snapshot_id

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

        frozen = d.pop("frozen", UNSET)

        image = d.pop("image", UNSET)

        memory = d.pop("memory", UNSET)

        name = d.pop("name", UNSET)

        sandbox_id = d.pop("sandboxId", UNSET)

        size_bytes = d.pop("sizeBytes", UNSET)

        snapshot_id = d.pop("snapshotId", UNSET)

        snapshot = cls(
            create_time=create_time,
            frozen=frozen,
            image=image,
            memory=memory,
            name=name,
            sandbox_id=sandbox_id,
            size_bytes=size_bytes,
            snapshot_id=snapshot_id,
        )

        snapshot.additional_properties = d
        return snapshot

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
