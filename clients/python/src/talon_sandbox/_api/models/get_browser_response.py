from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.browser import Browser


T = TypeVar("T", bound="GetBrowserResponse")


@_attrs_define
class GetBrowserResponse:
    """Response of GetBrowser.

    Attributes:
        browser (Browser | Unset): A browser.
    """

    browser: Browser | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        browser: dict[str, Any] | Unset = UNSET
        if not isinstance(self.browser, Unset):
            browser = self.browser.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if browser is not UNSET:
            field_dict["browser"] = browser

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.browser import Browser  # noqa: PLC0415

        d = dict(src_dict)
        _browser = d.pop("browser", UNSET)
        browser: Browser | Unset
        if isinstance(_browser, Unset):
            browser = UNSET
        else:
            browser = Browser.from_dict(_browser)

        get_browser_response = cls(
            browser=browser,
        )

        get_browser_response.additional_properties = d
        return get_browser_response

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
