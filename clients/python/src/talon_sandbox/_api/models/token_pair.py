from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="TokenPair")


@_attrs_define
class TokenPair:
    """A pair of tokens.

    Attributes:
        access_token (str | Unset): A JWT for `authorization: Bearer`.
        access_token_expire_time (datetime.datetime | Unset): When the access token expires.
        refresh_token (str | Unset): An opaque token for Refresh.
        refresh_token_expire_time (datetime.datetime | Unset): When the refresh token expires.
    """

    access_token: str | Unset = UNSET
    access_token_expire_time: datetime.datetime | Unset = UNSET
    refresh_token: str | Unset = UNSET
    refresh_token_expire_time: datetime.datetime | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        access_token = self.access_token

        access_token_expire_time: str | Unset = UNSET
        if not isinstance(self.access_token_expire_time, Unset):
            access_token_expire_time = self.access_token_expire_time.isoformat()

        refresh_token = self.refresh_token

        refresh_token_expire_time: str | Unset = UNSET
        if not isinstance(self.refresh_token_expire_time, Unset):
            refresh_token_expire_time = self.refresh_token_expire_time.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if access_token is not UNSET:
            field_dict["accessToken"] = access_token
        if access_token_expire_time is not UNSET:
            field_dict["accessTokenExpireTime"] = access_token_expire_time
        if refresh_token is not UNSET:
            field_dict["refreshToken"] = refresh_token
        if refresh_token_expire_time is not UNSET:
            field_dict["refreshTokenExpireTime"] = refresh_token_expire_time

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        access_token = d.pop("accessToken", UNSET)

        _access_token_expire_time = d.pop("accessTokenExpireTime", UNSET)
        access_token_expire_time: datetime.datetime | Unset
        if isinstance(_access_token_expire_time, Unset):
            access_token_expire_time = UNSET
        else:
            access_token_expire_time = datetime.datetime.fromisoformat(
                _access_token_expire_time
            )

        refresh_token = d.pop("refreshToken", UNSET)

        _refresh_token_expire_time = d.pop("refreshTokenExpireTime", UNSET)
        refresh_token_expire_time: datetime.datetime | Unset
        if isinstance(_refresh_token_expire_time, Unset):
            refresh_token_expire_time = UNSET
        else:
            refresh_token_expire_time = datetime.datetime.fromisoformat(
                _refresh_token_expire_time
            )

        token_pair = cls(
            access_token=access_token,
            access_token_expire_time=access_token_expire_time,
            refresh_token=refresh_token,
            refresh_token_expire_time=refresh_token_expire_time,
        )

        token_pair.additional_properties = d
        return token_pair

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
