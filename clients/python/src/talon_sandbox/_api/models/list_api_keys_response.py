from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.api_key import ApiKey


T = TypeVar("T", bound="ListApiKeysResponse")


@_attrs_define
class ListApiKeysResponse:
    """Response of ListApiKeys.

    Attributes:
        api_keys (list[ApiKey] | Unset): One page.
        next_page_token (str | Unset): Empty on the last page.
    """

    api_keys: list[ApiKey] | Unset = UNSET
    next_page_token: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        api_keys: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.api_keys, Unset):
            api_keys = []
            for api_keys_item_data in self.api_keys:
                api_keys_item = api_keys_item_data.to_dict()
                api_keys.append(api_keys_item)

        next_page_token = self.next_page_token

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if api_keys is not UNSET:
            field_dict["apiKeys"] = api_keys
        if next_page_token is not UNSET:
            field_dict["nextPageToken"] = next_page_token

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.api_key import ApiKey  # noqa: PLC0415

        d = dict(src_dict)
        _api_keys = d.pop("apiKeys", UNSET)
        api_keys: list[ApiKey] | Unset = UNSET
        if _api_keys is not UNSET:
            api_keys = []
            for api_keys_item_data in _api_keys:
                api_keys_item = ApiKey.from_dict(api_keys_item_data)

                api_keys.append(api_keys_item)

        next_page_token = d.pop("nextPageToken", UNSET)

        list_api_keys_response = cls(
            api_keys=api_keys,
            next_page_token=next_page_token,
        )

        list_api_keys_response.additional_properties = d
        return list_api_keys_response

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
