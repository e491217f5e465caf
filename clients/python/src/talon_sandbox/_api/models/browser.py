from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.browser_state import BrowserState
from ..types import UNSET, Unset

T = TypeVar("T", bound="Browser")


@_attrs_define
class Browser:
    """A browser.

    Attributes:
        cdp_url (str | Unset): The CDP HTTP endpoint, through the gateway.
        sandbox_id (str | Unset): The sandbox it runs in.
        start_time (datetime.datetime | Unset): When it started.
        state (BrowserState | Unset): State.
        websocket_debugger_url (str | Unset): The browser-level DevTools WebSocket URL.
    """

    cdp_url: str | Unset = UNSET
    sandbox_id: str | Unset = UNSET
    start_time: datetime.datetime | Unset = UNSET
    state: BrowserState | Unset = UNSET
    websocket_debugger_url: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        cdp_url = self.cdp_url

        sandbox_id = self.sandbox_id

        start_time: str | Unset = UNSET
        if not isinstance(self.start_time, Unset):
            start_time = self.start_time.isoformat()

        state: str | Unset = UNSET
        if not isinstance(self.state, Unset):
            state = self.state.value

        websocket_debugger_url = self.websocket_debugger_url

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if cdp_url is not UNSET:
            field_dict["cdpUrl"] = cdp_url
        if sandbox_id is not UNSET:
            field_dict["sandboxId"] = sandbox_id
        if start_time is not UNSET:
            field_dict["startTime"] = start_time
        if state is not UNSET:
            field_dict["state"] = state
        if websocket_debugger_url is not UNSET:
            field_dict["websocketDebuggerUrl"] = websocket_debugger_url

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        cdp_url = d.pop("cdpUrl", UNSET)

        sandbox_id = d.pop("sandboxId", UNSET)

        _start_time = d.pop("startTime", UNSET)
        start_time: datetime.datetime | Unset
        if isinstance(_start_time, Unset):
            start_time = UNSET
        else:
            start_time = datetime.datetime.fromisoformat(_start_time)

        _state = d.pop("state", UNSET)
        state: BrowserState | Unset
        if isinstance(_state, Unset):
            state = UNSET
        else:
            state = BrowserState(_state)

        websocket_debugger_url = d.pop("websocketDebuggerUrl", UNSET)

        browser = cls(
            cdp_url=cdp_url,
            sandbox_id=sandbox_id,
            start_time=start_time,
            state=state,
            websocket_debugger_url=websocket_debugger_url,
        )

        browser.additional_properties = d
        return browser

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
