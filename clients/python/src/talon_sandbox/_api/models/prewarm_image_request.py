from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="PrewarmImageRequest")


@_attrs_define
class PrewarmImageRequest:
    """Request for PrewarmImage.

    Attributes:
        name (str | Unset): The image.
        pool_size (int | Unset): Pool size per worker; the worker's configured size when 0.
    """

    name: str | Unset = UNSET
    pool_size: int | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        pool_size = self.pool_size

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if name is not UNSET:
            field_dict["name"] = name
        if pool_size is not UNSET:
            field_dict["poolSize"] = pool_size

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        name = d.pop("name", UNSET)

        pool_size = d.pop("poolSize", UNSET)

        prewarm_image_request = cls(
            name=name,
            pool_size=pool_size,
        )

        prewarm_image_request.additional_properties = d
        return prewarm_image_request

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
