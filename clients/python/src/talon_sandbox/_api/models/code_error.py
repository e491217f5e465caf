from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="CodeError")


@_attrs_define
class CodeError:
    """An error raised by the code.

    Attributes:
        name (str | Unset): The exception's type, e.g. "ZeroDivisionError".
        traceback (list[str] | Unset): The traceback, one entry per frame, as plain text.
        value (str | Unset): Its message.
    """

    name: str | Unset = UNSET
    traceback: list[str] | Unset = UNSET
    value: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        traceback: list[str] | Unset = UNSET
        if not isinstance(self.traceback, Unset):
            traceback = self.traceback

        value = self.value

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if name is not UNSET:
            field_dict["name"] = name
        if traceback is not UNSET:
            field_dict["traceback"] = traceback
        if value is not UNSET:
            field_dict["value"] = value

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        name = d.pop("name", UNSET)

        traceback = cast(list[str], d.pop("traceback", UNSET))

        value = d.pop("value", UNSET)

        code_error = cls(
            name=name,
            traceback=traceback,
            value=value,
        )

        code_error.additional_properties = d
        return code_error

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
