from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="TakeScreenshotResponse")


@_attrs_define
class TakeScreenshotResponse:
    """Response of TakeScreenshot.

    Attributes:
        png (str | Unset): The PNG.
        title (str | Unset): The page's title.
        url (str | Unset): The page's URL.
    """

    png: str | Unset = UNSET
    title: str | Unset = UNSET
    url: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        png = self.png

        title = self.title

        url = self.url

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if png is not UNSET:
            field_dict["png"] = png
        if title is not UNSET:
            field_dict["title"] = title
        if url is not UNSET:
            field_dict["url"] = url

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        png = d.pop("png", UNSET)

        title = d.pop("title", UNSET)

        url = d.pop("url", UNSET)

        take_screenshot_response = cls(
            png=png,
            title=title,
            url=url,
        )

        take_screenshot_response.additional_properties = d
        return take_screenshot_response

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
