from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.import_image_header import ImportImageHeader


T = TypeVar("T", bound="ImportImageRequest")


@_attrs_define
class ImportImageRequest:
    """Request for ImportImage.

    Attributes:
        data (str | Unset): Archive bytes.
        header (ImportImageHeader | Unset): The header of an ImportImage stream.
    """

    data: str | Unset = UNSET
    header: ImportImageHeader | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        data = self.data

        header: dict[str, Any] | Unset = UNSET
        if not isinstance(self.header, Unset):
            header = self.header.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if data is not UNSET:
            field_dict["data"] = data
        if header is not UNSET:
            field_dict["header"] = header

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.import_image_header import ImportImageHeader  # noqa: PLC0415

        d = dict(src_dict)
        data = d.pop("data", UNSET)

        _header = d.pop("header", UNSET)
        header: ImportImageHeader | Unset
        if isinstance(_header, Unset):
            header = UNSET
        else:
            header = ImportImageHeader.from_dict(_header)

        import_image_request = cls(
            data=data,
            header=header,
        )

        import_image_request.additional_properties = d
        return import_image_request

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
