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
        cdp_port (int | Unset): The DevTools port on the sandbox's loopback.
        cdp_url (str | Unset): The CDP HTTP endpoint, through the gateway, with a token for this
             sandbox in its path (empty unless running). `/json/version` and
             `/json/list` under it name WebSocket URLs through the gateway too.
        error (str | Unset): How a crashed browser ended (exit code or signal, and the last lines
             it wrote), or why it could not start.
        expire_time (datetime.datetime | Unset): When the token in the URLs expires; GetBrowser issues fresh ones.
        live_view_url (str | Unset): A page that shows the browser's screen as it changes (CDP screencast
             frames), for a person watching what an agent does.
        pid (int | Unset): The browser's pid inside the sandbox.
        sandbox_id (str | Unset): The sandbox it runs in.
        start_time (datetime.datetime | Unset): When it started.
        state (BrowserState | Unset): State.
        websocket_debugger_url (str | Unset): The browser-level DevTools WebSocket URL, through the gateway.
        window_size (str | Unset): The window size it runs with, e.g. "1280,720".
    """

    cdp_port: int | Unset = UNSET
    cdp_url: str | Unset = UNSET
    error: str | Unset = UNSET
    expire_time: datetime.datetime | Unset = UNSET
    live_view_url: str | Unset = UNSET
    pid: int | Unset = UNSET
    sandbox_id: str | Unset = UNSET
    start_time: datetime.datetime | Unset = UNSET
    state: BrowserState | Unset = UNSET
    websocket_debugger_url: str | Unset = UNSET
    window_size: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        cdp_port = self.cdp_port

        cdp_url = self.cdp_url

        error = self.error

        expire_time: str | Unset = UNSET
        if not isinstance(self.expire_time, Unset):
            expire_time = self.expire_time.isoformat()

        live_view_url = self.live_view_url

        pid = self.pid

        sandbox_id = self.sandbox_id

        start_time: str | Unset = UNSET
        if not isinstance(self.start_time, Unset):
            start_time = self.start_time.isoformat()

        state: str | Unset = UNSET
        if not isinstance(self.state, Unset):
            state = self.state.value

        websocket_debugger_url = self.websocket_debugger_url

        window_size = self.window_size

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if cdp_port is not UNSET:
            field_dict["cdpPort"] = cdp_port
        if cdp_url is not UNSET:
            field_dict["cdpUrl"] = cdp_url
        if error is not UNSET:
            field_dict["error"] = error
        if expire_time is not UNSET:
            field_dict["expireTime"] = expire_time
        if live_view_url is not UNSET:
            field_dict["liveViewUrl"] = live_view_url
        if pid is not UNSET:
            field_dict["pid"] = pid
        if sandbox_id is not UNSET:
            field_dict["sandboxId"] = sandbox_id
        if start_time is not UNSET:
            field_dict["startTime"] = start_time
        if state is not UNSET:
            field_dict["state"] = state
        if websocket_debugger_url is not UNSET:
            field_dict["websocketDebuggerUrl"] = websocket_debugger_url
        if window_size is not UNSET:
            field_dict["windowSize"] = window_size

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        cdp_port = d.pop("cdpPort", UNSET)

        cdp_url = d.pop("cdpUrl", UNSET)

        error = d.pop("error", UNSET)

        _expire_time = d.pop("expireTime", UNSET)
        expire_time: datetime.datetime | Unset
        if isinstance(_expire_time, Unset):
            expire_time = UNSET
        else:
            expire_time = datetime.datetime.fromisoformat(_expire_time)

        live_view_url = d.pop("liveViewUrl", UNSET)

        pid = d.pop("pid", UNSET)

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

        window_size = d.pop("windowSize", UNSET)

        browser = cls(
            cdp_port=cdp_port,
            cdp_url=cdp_url,
            error=error,
            expire_time=expire_time,
            live_view_url=live_view_url,
            pid=pid,
            sandbox_id=sandbox_id,
            start_time=start_time,
            state=state,
            websocket_debugger_url=websocket_debugger_url,
            window_size=window_size,
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
