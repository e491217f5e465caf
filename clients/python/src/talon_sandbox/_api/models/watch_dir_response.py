from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.watch_dir_response_type import WatchDirResponseType
from ..types import UNSET, Unset

T = TypeVar("T", bound="WatchDirResponse")


@_attrs_define
class WatchDirResponse:
    """Response of WatchDir: one change.

    Attributes:
        event_time (datetime.datetime | Unset): When it was seen.
        path (str | Unset): The changed path.
        type_ (WatchDirResponseType | Unset): The kind.
    """

    event_time: datetime.datetime | Unset = UNSET
    path: str | Unset = UNSET
    type_: WatchDirResponseType | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        event_time: str | Unset = UNSET
        if not isinstance(self.event_time, Unset):
            event_time = self.event_time.isoformat()

        path = self.path

        type_: str | Unset = UNSET
        if not isinstance(self.type_, Unset):
            type_ = self.type_.value

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if event_time is not UNSET:
            field_dict["eventTime"] = event_time
        if path is not UNSET:
            field_dict["path"] = path
        if type_ is not UNSET:
            field_dict["type"] = type_

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        _event_time = d.pop("eventTime", UNSET)
        event_time: datetime.datetime | Unset
        if isinstance(_event_time, Unset):
            event_time = UNSET
        else:
            event_time = datetime.datetime.fromisoformat(_event_time)

        path = d.pop("path", UNSET)

        _type_ = d.pop("type", UNSET)
        type_: WatchDirResponseType | Unset
        if isinstance(_type_, Unset):
            type_ = UNSET
        else:
            type_ = WatchDirResponseType(_type_)

        watch_dir_response = cls(
            event_time=event_time,
            path=path,
            type_=type_,
        )

        watch_dir_response.additional_properties = d
        return watch_dir_response

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
