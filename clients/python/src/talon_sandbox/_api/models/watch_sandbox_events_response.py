from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.watch_sandbox_events_response_kind import WatchSandboxEventsResponseKind
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.sandbox import Sandbox


T = TypeVar("T", bound="WatchSandboxEventsResponse")


@_attrs_define
class WatchSandboxEventsResponse:
    """One event of a sandbox: a state change, or something that happened in
    it.

       Attributes:
           event_time (datetime.datetime | Unset): When it happened.
           kind (WatchSandboxEventsResponseKind | Unset): What happened.
           message (str | Unset): Details, e.g. how the browser ended.
           sandbox (Sandbox | Unset): A sandbox. Fields marked output-only are set by the server; values sent
                by a client in them are ignored.
    """

    event_time: datetime.datetime | Unset = UNSET
    kind: WatchSandboxEventsResponseKind | Unset = UNSET
    message: str | Unset = UNSET
    sandbox: Sandbox | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        event_time: str | Unset = UNSET
        if not isinstance(self.event_time, Unset):
            event_time = self.event_time.isoformat()

        kind: str | Unset = UNSET
        if not isinstance(self.kind, Unset):
            kind = self.kind.value

        message = self.message

        sandbox: dict[str, Any] | Unset = UNSET
        if not isinstance(self.sandbox, Unset):
            sandbox = self.sandbox.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if event_time is not UNSET:
            field_dict["eventTime"] = event_time
        if kind is not UNSET:
            field_dict["kind"] = kind
        if message is not UNSET:
            field_dict["message"] = message
        if sandbox is not UNSET:
            field_dict["sandbox"] = sandbox

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.sandbox import Sandbox  # noqa: PLC0415

        d = dict(src_dict)
        _event_time = d.pop("eventTime", UNSET)
        event_time: datetime.datetime | Unset
        if isinstance(_event_time, Unset):
            event_time = UNSET
        else:
            event_time = datetime.datetime.fromisoformat(_event_time)

        _kind = d.pop("kind", UNSET)
        kind: WatchSandboxEventsResponseKind | Unset
        if isinstance(_kind, Unset):
            kind = UNSET
        else:
            kind = WatchSandboxEventsResponseKind(_kind)

        message = d.pop("message", UNSET)

        _sandbox = d.pop("sandbox", UNSET)
        sandbox: Sandbox | Unset
        if isinstance(_sandbox, Unset):
            sandbox = UNSET
        else:
            sandbox = Sandbox.from_dict(_sandbox)

        watch_sandbox_events_response = cls(
            event_time=event_time,
            kind=kind,
            message=message,
            sandbox=sandbox,
        )

        watch_sandbox_events_response.additional_properties = d
        return watch_sandbox_events_response

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
