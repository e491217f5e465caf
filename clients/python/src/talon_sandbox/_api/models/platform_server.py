from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="PlatformServer")


@_attrs_define
class PlatformServer:
    """A server of the control plane.

    Attributes:
        address (str | Unset): Its gRPC URL, as its peers reach it; empty on SQLite.
        answering (bool | Unset): It is the server that answered this call.
        duties_leader (bool | Unset): It holds the duties lease.
        last_heartbeat_time (datetime.datetime | Unset): Its last heartbeat.
        live (bool | Unset): Its heartbeat is recent (within 5 s).
        server_id (str | Unset): Its id, chosen when it starts.
    """

    address: str | Unset = UNSET
    answering: bool | Unset = UNSET
    duties_leader: bool | Unset = UNSET
    last_heartbeat_time: datetime.datetime | Unset = UNSET
    live: bool | Unset = UNSET
    server_id: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        address = self.address

        answering = self.answering

        duties_leader = self.duties_leader

        last_heartbeat_time: str | Unset = UNSET
        if not isinstance(self.last_heartbeat_time, Unset):
            last_heartbeat_time = self.last_heartbeat_time.isoformat()

        live = self.live

        server_id = self.server_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if address is not UNSET:
            field_dict["address"] = address
        if answering is not UNSET:
            field_dict["answering"] = answering
        if duties_leader is not UNSET:
            field_dict["dutiesLeader"] = duties_leader
        if last_heartbeat_time is not UNSET:
            field_dict["lastHeartbeatTime"] = last_heartbeat_time
        if live is not UNSET:
            field_dict["live"] = live
        if server_id is not UNSET:
            field_dict["serverId"] = server_id

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        address = d.pop("address", UNSET)

        answering = d.pop("answering", UNSET)

        duties_leader = d.pop("dutiesLeader", UNSET)

        _last_heartbeat_time = d.pop("lastHeartbeatTime", UNSET)
        last_heartbeat_time: datetime.datetime | Unset
        if isinstance(_last_heartbeat_time, Unset):
            last_heartbeat_time = UNSET
        else:
            last_heartbeat_time = datetime.datetime.fromisoformat(_last_heartbeat_time)

        live = d.pop("live", UNSET)

        server_id = d.pop("serverId", UNSET)

        platform_server = cls(
            address=address,
            answering=answering,
            duties_leader=duties_leader,
            last_heartbeat_time=last_heartbeat_time,
            live=live,
            server_id=server_id,
        )

        platform_server.additional_properties = d
        return platform_server

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
