from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.api_key_role import ApiKeyRole
from ..types import UNSET, Unset

T = TypeVar("T", bound="ApiKey")


@_attrs_define
class ApiKey:
    """An API key, without its secret.

    Attributes:
        api_key_id (str | Unset): Output only. "key_…".
        create_time (datetime.datetime | Unset): Output only.
        expire_time (datetime.datetime | Unset): When it stops working; never when unset.
        last_use_time (datetime.datetime | Unset): Output only.
        name (str | Unset): A name to recognise it by.
        prefix (str | Unset): Output only. The visible start of the key, e.g. "tln_ab12cd34".
        role (ApiKeyRole | Unset): The role it acts with; never above its user's.
        tenant_id (str | Unset): Output only.
        user_id (str | Unset): Output only. The user it acts for.
    """

    api_key_id: str | Unset = UNSET
    create_time: datetime.datetime | Unset = UNSET
    expire_time: datetime.datetime | Unset = UNSET
    last_use_time: datetime.datetime | Unset = UNSET
    name: str | Unset = UNSET
    prefix: str | Unset = UNSET
    role: ApiKeyRole | Unset = UNSET
    tenant_id: str | Unset = UNSET
    user_id: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        api_key_id = self.api_key_id

        create_time: str | Unset = UNSET
        if not isinstance(self.create_time, Unset):
            create_time = self.create_time.isoformat()

        expire_time: str | Unset = UNSET
        if not isinstance(self.expire_time, Unset):
            expire_time = self.expire_time.isoformat()

        last_use_time: str | Unset = UNSET
        if not isinstance(self.last_use_time, Unset):
            last_use_time = self.last_use_time.isoformat()

        name = self.name

        prefix = self.prefix

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
        if create_time is not UNSET:
            field_dict["createTime"] = create_time
        if expire_time is not UNSET:
            field_dict["expireTime"] = expire_time
        if last_use_time is not UNSET:
            field_dict["lastUseTime"] = last_use_time
        if name is not UNSET:
            field_dict["name"] = name
        if prefix is not UNSET:
            field_dict["prefix"] = prefix
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

        _create_time = d.pop("createTime", UNSET)
        create_time: datetime.datetime | Unset
        if isinstance(_create_time, Unset):
            create_time = UNSET
        else:
            create_time = datetime.datetime.fromisoformat(_create_time)

        _expire_time = d.pop("expireTime", UNSET)
        expire_time: datetime.datetime | Unset
        if isinstance(_expire_time, Unset):
            expire_time = UNSET
        else:
            expire_time = datetime.datetime.fromisoformat(_expire_time)

        _last_use_time = d.pop("lastUseTime", UNSET)
        last_use_time: datetime.datetime | Unset
        if isinstance(_last_use_time, Unset):
            last_use_time = UNSET
        else:
            last_use_time = datetime.datetime.fromisoformat(_last_use_time)

        name = d.pop("name", UNSET)

        prefix = d.pop("prefix", UNSET)

        _role = d.pop("role", UNSET)
        role: ApiKeyRole | Unset
        if isinstance(_role, Unset):
            role = UNSET
        else:
            role = ApiKeyRole(_role)

        tenant_id = d.pop("tenantId", UNSET)

        user_id = d.pop("userId", UNSET)

        api_key = cls(
            api_key_id=api_key_id,
            create_time=create_time,
            expire_time=expire_time,
            last_use_time=last_use_time,
            name=name,
            prefix=prefix,
            role=role,
            tenant_id=tenant_id,
            user_id=user_id,
        )

        api_key.additional_properties = d
        return api_key

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
