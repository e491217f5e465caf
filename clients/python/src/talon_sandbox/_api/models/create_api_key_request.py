from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.create_api_key_request_role import CreateApiKeyRequestRole
from ..types import UNSET, Unset

T = TypeVar("T", bound="CreateApiKeyRequest")


@_attrs_define
class CreateApiKeyRequest:
    """Request for CreateApiKey.

    Attributes:
        expire_time (datetime.datetime | Unset): When it stops working; never when unset.
        name (str | Unset): A name to recognise it by.
        role (CreateApiKeyRequestRole | Unset): The role; the caller's own when unset.
        tenant_id (str | Unset): The tenant, or "-".
    """

    expire_time: datetime.datetime | Unset = UNSET
    name: str | Unset = UNSET
    role: CreateApiKeyRequestRole | Unset = UNSET
    tenant_id: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        expire_time: str | Unset = UNSET
        if not isinstance(self.expire_time, Unset):
            expire_time = self.expire_time.isoformat()

        name = self.name

        role: str | Unset = UNSET
        if not isinstance(self.role, Unset):
            role = self.role.value

        tenant_id = self.tenant_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if expire_time is not UNSET:
            field_dict["expireTime"] = expire_time
        if name is not UNSET:
            field_dict["name"] = name
        if role is not UNSET:
            field_dict["role"] = role
        if tenant_id is not UNSET:
            field_dict["tenantId"] = tenant_id

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

        name = d.pop("name", UNSET)

        _role = d.pop("role", UNSET)
        role: CreateApiKeyRequestRole | Unset
        if isinstance(_role, Unset):
            role = UNSET
        else:
            role = CreateApiKeyRequestRole(_role)

        tenant_id = d.pop("tenantId", UNSET)

        create_api_key_request = cls(
            expire_time=expire_time,
            name=name,
            role=role,
            tenant_id=tenant_id,
        )

        create_api_key_request.additional_properties = d
        return create_api_key_request

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
