from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.quota import Quota
    from ..models.usage import Usage


T = TypeVar("T", bound="Tenant")


@_attrs_define
class Tenant:
    """A tenant.

    Attributes:
        create_time (datetime.datetime | Unset): Output only.
        name (str | Unset): Unique display name.
        platform (bool | Unset): Output only. This is the platform's own tenant, whose owners are
             platform admins.
        quota (Quota | Unset): Limits on what one tenant may hold at once. Zero means no sandboxes (or
             no cpu, no memory) at all; there is no "unlimited".
        tenant_id (str | Unset): Output only. "ten_…".
        usage (Usage | Unset): What a tenant holds now, counted as the quota counts.
    """

    create_time: datetime.datetime | Unset = UNSET
    name: str | Unset = UNSET
    platform: bool | Unset = UNSET
    quota: Quota | Unset = UNSET
    tenant_id: str | Unset = UNSET
    usage: Usage | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        create_time: str | Unset = UNSET
        if not isinstance(self.create_time, Unset):
            create_time = self.create_time.isoformat()

        name = self.name

        platform = self.platform

        quota: dict[str, Any] | Unset = UNSET
        if not isinstance(self.quota, Unset):
            quota = self.quota.to_dict()

        tenant_id = self.tenant_id

        usage: dict[str, Any] | Unset = UNSET
        if not isinstance(self.usage, Unset):
            usage = self.usage.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if create_time is not UNSET:
            field_dict["createTime"] = create_time
        if name is not UNSET:
            field_dict["name"] = name
        if platform is not UNSET:
            field_dict["platform"] = platform
        if quota is not UNSET:
            field_dict["quota"] = quota
        if tenant_id is not UNSET:
            field_dict["tenantId"] = tenant_id
        if usage is not UNSET:
            field_dict["usage"] = usage

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.quota import Quota  # noqa: PLC0415
        from ..models.usage import Usage  # noqa: PLC0415

        d = dict(src_dict)
        _create_time = d.pop("createTime", UNSET)
        create_time: datetime.datetime | Unset
        if isinstance(_create_time, Unset):
            create_time = UNSET
        else:
            create_time = datetime.datetime.fromisoformat(_create_time)

        name = d.pop("name", UNSET)

        platform = d.pop("platform", UNSET)

        _quota = d.pop("quota", UNSET)
        quota: Quota | Unset
        if isinstance(_quota, Unset):
            quota = UNSET
        else:
            quota = Quota.from_dict(_quota)

        tenant_id = d.pop("tenantId", UNSET)

        _usage = d.pop("usage", UNSET)
        usage: Usage | Unset
        if isinstance(_usage, Unset):
            usage = UNSET
        else:
            usage = Usage.from_dict(_usage)

        tenant = cls(
            create_time=create_time,
            name=name,
            platform=platform,
            quota=quota,
            tenant_id=tenant_id,
            usage=usage,
        )

        tenant.additional_properties = d
        return tenant

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
