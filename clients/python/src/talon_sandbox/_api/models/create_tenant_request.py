from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.quota import Quota


T = TypeVar("T", bound="CreateTenantRequest")


@_attrs_define
class CreateTenantRequest:
    """Request for CreateTenant.

    Attributes:
        name (str | Unset): Unique name.
        owner_email (str | Unset): The first owner's email.
        owner_password (str | Unset): The first owner's password; at least 12 characters.
        quota (Quota | Unset): Limits on what one tenant may hold at once. Zero means no sandboxes (or
             no cpu, no memory) at all; there is no "unlimited".
    """

    name: str | Unset = UNSET
    owner_email: str | Unset = UNSET
    owner_password: str | Unset = UNSET
    quota: Quota | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        owner_email = self.owner_email

        owner_password = self.owner_password

        quota: dict[str, Any] | Unset = UNSET
        if not isinstance(self.quota, Unset):
            quota = self.quota.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if name is not UNSET:
            field_dict["name"] = name
        if owner_email is not UNSET:
            field_dict["ownerEmail"] = owner_email
        if owner_password is not UNSET:
            field_dict["ownerPassword"] = owner_password
        if quota is not UNSET:
            field_dict["quota"] = quota

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.quota import Quota  # noqa: PLC0415

        d = dict(src_dict)
        name = d.pop("name", UNSET)

        owner_email = d.pop("ownerEmail", UNSET)

        owner_password = d.pop("ownerPassword", UNSET)

        _quota = d.pop("quota", UNSET)
        quota: Quota | Unset
        if isinstance(_quota, Unset):
            quota = UNSET
        else:
            quota = Quota.from_dict(_quota)

        create_tenant_request = cls(
            name=name,
            owner_email=owner_email,
            owner_password=owner_password,
            quota=quota,
        )

        create_tenant_request.additional_properties = d
        return create_tenant_request

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
