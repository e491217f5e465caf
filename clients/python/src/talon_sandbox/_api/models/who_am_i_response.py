from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.who_am_i_response_credential_kind import WhoAmIResponseCredentialKind
from ..models.who_am_i_response_role import WhoAmIResponseRole
from ..types import UNSET, Unset

T = TypeVar("T", bound="WhoAmIResponse")


@_attrs_define
class WhoAmIResponse:
    """Response of WhoAmI.

    Attributes:
        api_key_id (str | Unset): The API key's id, for an API key.
        credential_kind (WhoAmIResponseCredentialKind | Unset): How the caller authenticated.
        email (str | Unset): The user's email.
        platform_admin (bool | Unset): The caller may use platform-wide administration.
        role (WhoAmIResponseRole | Unset): The effective role.
        tenant_id (str | Unset): The tenant.
        user_id (str | Unset): The user (for an API key, the user who made it).
    """

    api_key_id: str | Unset = UNSET
    credential_kind: WhoAmIResponseCredentialKind | Unset = UNSET
    email: str | Unset = UNSET
    platform_admin: bool | Unset = UNSET
    role: WhoAmIResponseRole | Unset = UNSET
    tenant_id: str | Unset = UNSET
    user_id: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        api_key_id = self.api_key_id

        credential_kind: str | Unset = UNSET
        if not isinstance(self.credential_kind, Unset):
            credential_kind = self.credential_kind.value

        email = self.email

        platform_admin = self.platform_admin

        role: str | Unset = UNSET
        if not isinstance(self.role, Unset):
            role = self.role.value

        tenant_id = self.tenant_id

        user_id = self.user_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if api_key_id is not UNSET:
            field_dict["apiKeyId"] = api_key_id
        if credential_kind is not UNSET:
            field_dict["credentialKind"] = credential_kind
        if email is not UNSET:
            field_dict["email"] = email
        if platform_admin is not UNSET:
            field_dict["platformAdmin"] = platform_admin
        if role is not UNSET:
            field_dict["role"] = role
        if tenant_id is not UNSET:
            field_dict["tenantId"] = tenant_id
        if user_id is not UNSET:
            field_dict["userId"] = user_id

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        api_key_id = d.pop("apiKeyId", UNSET)

        _credential_kind = d.pop("credentialKind", UNSET)
        credential_kind: WhoAmIResponseCredentialKind | Unset
        if isinstance(_credential_kind, Unset):
            credential_kind = UNSET
        else:
            credential_kind = WhoAmIResponseCredentialKind(_credential_kind)

        email = d.pop("email", UNSET)

        platform_admin = d.pop("platformAdmin", UNSET)

        _role = d.pop("role", UNSET)
        role: WhoAmIResponseRole | Unset
        if isinstance(_role, Unset):
            role = UNSET
        else:
            role = WhoAmIResponseRole(_role)

        tenant_id = d.pop("tenantId", UNSET)

        user_id = d.pop("userId", UNSET)

        who_am_i_response = cls(
            api_key_id=api_key_id,
            credential_kind=credential_kind,
            email=email,
            platform_admin=platform_admin,
            role=role,
            tenant_id=tenant_id,
            user_id=user_id,
        )

        who_am_i_response.additional_properties = d
        return who_am_i_response

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
