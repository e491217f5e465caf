from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="LogoutRequest")


@_attrs_define
class LogoutRequest:
    """Request for Logout.

    Attributes:
        all_sessions (bool | Unset): Revoke every refresh token of the caller instead.
        refresh_token (str | Unset): The refresh token to revoke.
    """

    all_sessions: bool | Unset = UNSET
    refresh_token: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        all_sessions = self.all_sessions

        refresh_token = self.refresh_token

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if all_sessions is not UNSET:
            field_dict["allSessions"] = all_sessions
        if refresh_token is not UNSET:
            field_dict["refreshToken"] = refresh_token

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        all_sessions = d.pop("allSessions", UNSET)

        refresh_token = d.pop("refreshToken", UNSET)

        logout_request = cls(
            all_sessions=all_sessions,
            refresh_token=refresh_token,
        )

        logout_request.additional_properties = d
        return logout_request

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
