from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="CreateFileUrlResponse")


@_attrs_define
class CreateFileUrlResponse:
    """Response of CreateFileUrl.

    Attributes:
        expire_time (datetime.datetime | Unset): When it expires.
        token (str | Unset): The token alone: the gateway takes it as `?token=` on the file routes
             (`files:read`, `files:write`), the server as `talon-file-token`
             metadata on ReadFile and WriteFile.
        url (str | Unset): The URL, with the token in its query.
    """

    expire_time: datetime.datetime | Unset = UNSET
    token: str | Unset = UNSET
    url: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        expire_time: str | Unset = UNSET
        if not isinstance(self.expire_time, Unset):
            expire_time = self.expire_time.isoformat()

        token = self.token

        url = self.url

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if expire_time is not UNSET:
            field_dict["expireTime"] = expire_time
        if token is not UNSET:
            field_dict["token"] = token
        if url is not UNSET:
            field_dict["url"] = url

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        _expire_time = d.pop("expireTime", UNSET)
        expire_time: datetime.datetime | Unset
        if isinstance(_expire_time, Unset):
            expire_time = UNSET
        else:
            expire_time = datetime.datetime.fromisoformat(_expire_time)

        token = d.pop("token", UNSET)

        url = d.pop("url", UNSET)

        create_file_url_response = cls(
            expire_time=expire_time,
            token=token,
            url=url,
        )

        create_file_url_response.additional_properties = d
        return create_file_url_response

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
