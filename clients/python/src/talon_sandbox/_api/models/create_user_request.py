from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.create_user_request_role import CreateUserRequestRole
from ..types import UNSET, Unset

T = TypeVar("T", bound="CreateUserRequest")


@_attrs_define
class CreateUserRequest:
    """Request for CreateUser.

    Attributes:
        email (str | Unset): Login name.
        password (str | Unset): At least 12 characters.
        role (CreateUserRequestRole | Unset): The role; VIEWER when unset.
        tenant_id (str | Unset): The tenant, or "-".
    """

    email: str | Unset = UNSET
    password: str | Unset = UNSET
    role: CreateUserRequestRole | Unset = UNSET
    tenant_id: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        email = self.email

        password = self.password

        role: str | Unset = UNSET
        if not isinstance(self.role, Unset):
            role = self.role.value

        tenant_id = self.tenant_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if email is not UNSET:
            field_dict["email"] = email
        if password is not UNSET:
            field_dict["password"] = password
        if role is not UNSET:
            field_dict["role"] = role
        if tenant_id is not UNSET:
            field_dict["tenantId"] = tenant_id

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        email = d.pop("email", UNSET)

        password = d.pop("password", UNSET)

        _role = d.pop("role", UNSET)
        role: CreateUserRequestRole | Unset
        if isinstance(_role, Unset):
            role = UNSET
        else:
            role = CreateUserRequestRole(_role)

        tenant_id = d.pop("tenantId", UNSET)

        create_user_request = cls(
            email=email,
            password=password,
            role=role,
            tenant_id=tenant_id,
        )

        create_user_request.additional_properties = d
        return create_user_request

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
