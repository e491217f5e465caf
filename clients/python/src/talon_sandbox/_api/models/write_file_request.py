from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.write_file_finish import WriteFileFinish
    from ..models.write_file_header import WriteFileHeader


T = TypeVar("T", bound="WriteFileRequest")


@_attrs_define
class WriteFileRequest:
    """Request for WriteFile: a header, data messages, then the finish.

    Attributes:
        data (str | Unset): File content.
        finish (WriteFileFinish | Unset): The last message of a WriteFile stream. A stream that ends without it
             (a client that went away: proxies may turn a cancelled stream into a
             clean end) writes nothing.
        header (WriteFileHeader | Unset): The header of a WriteFile stream.
        sandbox_id (str | Unset): The sandbox; required on the first message.
    """

    data: str | Unset = UNSET
    finish: WriteFileFinish | Unset = UNSET
    header: WriteFileHeader | Unset = UNSET
    sandbox_id: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        data = self.data

        finish: dict[str, Any] | Unset = UNSET
        if not isinstance(self.finish, Unset):
            finish = self.finish.to_dict()

        header: dict[str, Any] | Unset = UNSET
        if not isinstance(self.header, Unset):
            header = self.header.to_dict()

        sandbox_id = self.sandbox_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if data is not UNSET:
            field_dict["data"] = data
        if finish is not UNSET:
            field_dict["finish"] = finish
        if header is not UNSET:
            field_dict["header"] = header
        if sandbox_id is not UNSET:
            field_dict["sandboxId"] = sandbox_id

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.write_file_finish import WriteFileFinish  # noqa: PLC0415
        from ..models.write_file_header import WriteFileHeader  # noqa: PLC0415

        d = dict(src_dict)
        data = d.pop("data", UNSET)

        _finish = d.pop("finish", UNSET)
        finish: WriteFileFinish | Unset
        if isinstance(_finish, Unset):
            finish = UNSET
        else:
            finish = WriteFileFinish.from_dict(_finish)

        _header = d.pop("header", UNSET)
        header: WriteFileHeader | Unset
        if isinstance(_header, Unset):
            header = UNSET
        else:
            header = WriteFileHeader.from_dict(_header)

        sandbox_id = d.pop("sandboxId", UNSET)

        write_file_request = cls(
            data=data,
            finish=finish,
            header=header,
            sandbox_id=sandbox_id,
        )

        write_file_request.additional_properties = d
        return write_file_request

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
