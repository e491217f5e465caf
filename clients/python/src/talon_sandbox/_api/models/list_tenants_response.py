from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.tenant import Tenant


T = TypeVar("T", bound="ListTenantsResponse")


@_attrs_define
class ListTenantsResponse:
    """Response of ListTenants.

    Attributes:
        next_page_token (str | Unset): Empty on the last page.
        tenants (list[Tenant] | Unset): One page.
    """

    next_page_token: str | Unset = UNSET
    tenants: list[Tenant] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        next_page_token = self.next_page_token

        tenants: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.tenants, Unset):
            tenants = []
            for tenants_item_data in self.tenants:
                tenants_item = tenants_item_data.to_dict()
                tenants.append(tenants_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if next_page_token is not UNSET:
            field_dict["nextPageToken"] = next_page_token
        if tenants is not UNSET:
            field_dict["tenants"] = tenants

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.tenant import Tenant  # noqa: PLC0415

        d = dict(src_dict)
        next_page_token = d.pop("nextPageToken", UNSET)

        _tenants = d.pop("tenants", UNSET)
        tenants: list[Tenant] | Unset = UNSET
        if _tenants is not UNSET:
            tenants = []
            for tenants_item_data in _tenants:
                tenants_item = Tenant.from_dict(tenants_item_data)

                tenants.append(tenants_item)

        list_tenants_response = cls(
            next_page_token=next_page_token,
            tenants=tenants,
        )

        list_tenants_response.additional_properties = d
        return list_tenants_response

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
