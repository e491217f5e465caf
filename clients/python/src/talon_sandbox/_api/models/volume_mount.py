from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="VolumeMount")


@_attrs_define
class VolumeMount:
    """Where a sandbox mounts a volume (Sandbox.volume_mounts).

    Attributes:
        name (str | Unset): The volume's name.
        path (str | Unset): An absolute path in the sandbox, not / and not under /proc, /sys,
             /dev, /run, /.talon or /var/log/talon; at most 255 bytes of
             [A-Za-z0-9._/-] with no empty, `.` or `..` component. In a read-only
             image's root it must exist, or lie under a directory of the
             sandbox's disk (/workspace, /tmp, /home).
        read_only (bool | Unset): Mounted read-only.
    """

    name: str | Unset = UNSET
    path: str | Unset = UNSET
    read_only: bool | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        path = self.path

        read_only = self.read_only

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if name is not UNSET:
            field_dict["name"] = name
        if path is not UNSET:
            field_dict["path"] = path
        if read_only is not UNSET:
            field_dict["readOnly"] = read_only

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        name = d.pop("name", UNSET)

        path = d.pop("path", UNSET)

        read_only = d.pop("readOnly", UNSET)

        volume_mount = cls(
            name=name,
            path=path,
            read_only=read_only,
        )

        volume_mount.additional_properties = d
        return volume_mount

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
