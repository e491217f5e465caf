from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.code_result_data import CodeResultData


T = TypeVar("T", bound="CodeResult")


@_attrs_define
class CodeResult:
    """A rich result, by MIME type: `text/plain` always when the kernel gives
    one; `image/png` and other binary types base64-encoded, as Jupyter sends
    them; `application/json` as JSON text.

       Attributes:
           data (CodeResultData | Unset): MIME type -> representation.
           is_main_result (bool | Unset): The run's own value (the last expression), not a display.
    """

    data: CodeResultData | Unset = UNSET
    is_main_result: bool | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] | Unset = UNSET
        if not isinstance(self.data, Unset):
            data = self.data.to_dict()

        is_main_result = self.is_main_result

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if data is not UNSET:
            field_dict["data"] = data
        if is_main_result is not UNSET:
            field_dict["isMainResult"] = is_main_result

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.code_result_data import CodeResultData  # noqa: PLC0415

        d = dict(src_dict)
        _data = d.pop("data", UNSET)
        data: CodeResultData | Unset
        if isinstance(_data, Unset):
            data = UNSET
        else:
            data = CodeResultData.from_dict(_data)

        is_main_result = d.pop("isMainResult", UNSET)

        code_result = cls(
            data=data,
            is_main_result=is_main_result,
        )

        code_result.additional_properties = d
        return code_result

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
