from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.image_source import ImageSource
from ..types import UNSET, Unset

T = TypeVar("T", bound="Image")


@_attrs_define
class Image:
    """An image.

    Attributes:
        create_time (datetime.datetime | Unset): Output only.
        digest (str | Unset): Manifest digest, for OCI images.
        name (str | Unset): Unique name, e.g. "host" or "debian:bookworm".
        size_bytes (str | Unset): Unpacked size in bytes.
        source (ImageSource | Unset): Where it came from.
    """

    create_time: datetime.datetime | Unset = UNSET
    digest: str | Unset = UNSET
    name: str | Unset = UNSET
    size_bytes: str | Unset = UNSET
    source: ImageSource | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        create_time: str | Unset = UNSET
        if not isinstance(self.create_time, Unset):
            create_time = self.create_time.isoformat()

        digest = self.digest

        name = self.name

        size_bytes = self.size_bytes

        source: str | Unset = UNSET
        if not isinstance(self.source, Unset):
            source = self.source.value

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if create_time is not UNSET:
            field_dict["createTime"] = create_time
        if digest is not UNSET:
            field_dict["digest"] = digest
        if name is not UNSET:
            field_dict["name"] = name
        if size_bytes is not UNSET:
            field_dict["sizeBytes"] = size_bytes
        if source is not UNSET:
            field_dict["source"] = source

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

        digest = d.pop("digest", UNSET)

        name = d.pop("name", UNSET)

        size_bytes = d.pop("sizeBytes", UNSET)

        _source = d.pop("source", UNSET)
        source: ImageSource | Unset
        if isinstance(_source, Unset):
            source = UNSET
        else:
            source = ImageSource(_source)

        image = cls(
            create_time=create_time,
            digest=digest,
            name=name,
            size_bytes=size_bytes,
            source=source,
        )

        image.additional_properties = d
        return image

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
