from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="CreateBrowserSessionResponse")


@_attrs_define
class CreateBrowserSessionResponse:
    """Response of CreateBrowserSession.

    Attributes:
        csrf_token (str | Unset): Send this as `X-CSRF-Token` on every state-changing call made with the
             session cookie. It is bound to the session (its hash is signed into it).
        expires_at (datetime.datetime | Unset): When the session ends.
        session_token (str | Unset): The session credential. Empty over REST: it is in the cookie, out of
             reach of scripts.
    """

    csrf_token: str | Unset = UNSET
    expires_at: datetime.datetime | Unset = UNSET
    session_token: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        csrf_token = self.csrf_token

        expires_at: str | Unset = UNSET
        if not isinstance(self.expires_at, Unset):
            expires_at = self.expires_at.isoformat()

        session_token = self.session_token

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if csrf_token is not UNSET:
            field_dict["csrfToken"] = csrf_token
        if expires_at is not UNSET:
            field_dict["expiresAt"] = expires_at
        if session_token is not UNSET:
            field_dict["sessionToken"] = session_token

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        csrf_token = d.pop("csrfToken", UNSET)

        _expires_at = d.pop("expiresAt", UNSET)
        expires_at: datetime.datetime | Unset
        if isinstance(_expires_at, Unset):
            expires_at = UNSET
        else:
            expires_at = datetime.datetime.fromisoformat(_expires_at)

        session_token = d.pop("sessionToken", UNSET)

        create_browser_session_response = cls(
            csrf_token=csrf_token,
            expires_at=expires_at,
            session_token=session_token,
        )

        create_browser_session_response.additional_properties = d
        return create_browser_session_response

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
