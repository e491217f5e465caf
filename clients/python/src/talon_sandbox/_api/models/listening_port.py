from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="ListeningPort")


@_attrs_define
class ListeningPort:
    """A listening socket.

    Attributes:
        address (str | Unset): The bound address.
        pid (int | Unset): The owning process, when known.
        port (int | Unset): The port.
        protocol (str | Unset): "tcp" or "tcp6".
    """

    address: str | Unset = UNSET
    pid: int | Unset = UNSET
    port: int | Unset = UNSET
    protocol: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        address = self.address

        pid = self.pid

        port = self.port

        protocol = self.protocol

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if address is not UNSET:
            field_dict["address"] = address
        if pid is not UNSET:
            field_dict["pid"] = pid
        if port is not UNSET:
            field_dict["port"] = port
        if protocol is not UNSET:
            field_dict["protocol"] = protocol

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        address = d.pop("address", UNSET)

        pid = d.pop("pid", UNSET)

        port = d.pop("port", UNSET)

        protocol = d.pop("protocol", UNSET)

        listening_port = cls(
            address=address,
            pid=pid,
            port=port,
            protocol=protocol,
        )

        listening_port.additional_properties = d
        return listening_port

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
