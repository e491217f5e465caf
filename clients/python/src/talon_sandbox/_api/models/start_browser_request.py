from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="StartBrowserRequest")


@_attrs_define
class StartBrowserRequest:
    """Request for StartBrowser.

    Attributes:
        sandbox_id (str | Unset): The sandbox.
        url_ttl (str | Unset): How long the URLs' token lasts: 1 h when unset, at most 24 h.
        window_size (str | Unset): Window size "W,H" (each 100-7680), 1280,720 when empty.
    """

    sandbox_id: str | Unset = UNSET
    url_ttl: str | Unset = UNSET
    window_size: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        sandbox_id = self.sandbox_id

        url_ttl = self.url_ttl

        window_size = self.window_size

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if sandbox_id is not UNSET:
            field_dict["sandboxId"] = sandbox_id
        if url_ttl is not UNSET:
            field_dict["urlTtl"] = url_ttl
        if window_size is not UNSET:
            field_dict["windowSize"] = window_size

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        sandbox_id = d.pop("sandboxId", UNSET)

        url_ttl = d.pop("urlTtl", UNSET)

        window_size = d.pop("windowSize", UNSET)

        start_browser_request = cls(
            sandbox_id=sandbox_id,
            url_ttl=url_ttl,
            window_size=window_size,
        )

        start_browser_request.additional_properties = d
        return start_browser_request

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
