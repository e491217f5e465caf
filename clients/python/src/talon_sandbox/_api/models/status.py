from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.google_protobuf_any import GoogleProtobufAny


T = TypeVar("T", bound="Status")


@_attrs_define
class Status:
    """The `Status` type defines a logical error model that is suitable for different programming environments, including
    REST APIs and RPC APIs. It is used by [gRPC](https://github.com/grpc). Each `Status` message contains three pieces
    of data: error code, error message, and error details. You can find out more about this error model and how to work
    with it in the [API Design Guide](https://cloud.google.com/apis/design/errors).

        Attributes:
            code (int | Unset): The status code, which should be an enum value of [google.rpc.Code][google.rpc.Code].
            details (list[GoogleProtobufAny] | Unset): A list of messages that carry the error details.  There is a common
                set of message types for APIs to use.
            message (str | Unset): A developer-facing error message, which should be in English. Any user-facing error
                message should be localized and sent in the [google.rpc.Status.details][google.rpc.Status.details] field, or
                localized by the client.
    """

    code: int | Unset = UNSET
    details: list[GoogleProtobufAny] | Unset = UNSET
    message: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        code = self.code

        details: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.details, Unset):
            details = []
            for details_item_data in self.details:
                details_item = details_item_data.to_dict()
                details.append(details_item)

        message = self.message

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if code is not UNSET:
            field_dict["code"] = code
        if details is not UNSET:
            field_dict["details"] = details
        if message is not UNSET:
            field_dict["message"] = message

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.google_protobuf_any import GoogleProtobufAny  # noqa: PLC0415

        d = dict(src_dict)
        code = d.pop("code", UNSET)

        _details = d.pop("details", UNSET)
        details: list[GoogleProtobufAny] | Unset = UNSET
        if _details is not UNSET:
            details = []
            for details_item_data in _details:
                details_item = GoogleProtobufAny.from_dict(details_item_data)

                details.append(details_item)

        message = d.pop("message", UNSET)

        status = cls(
            code=code,
            details=details,
            message=message,
        )

        status.additional_properties = d
        return status

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
