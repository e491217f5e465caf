from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.file_info_type import FileInfoType
from ..types import UNSET, Unset

T = TypeVar("T", bound="FileInfo")


@_attrs_define
class FileInfo:
    """What Stat and ListDir return for a path.

    Attributes:
        gid (int | Unset): Owner gid inside the sandbox.
        mode (int | Unset): Permission bits.
        modify_time (datetime.datetime | Unset): Last modification.
        name (str | Unset): The last component.
        path (str | Unset): The path, as absolute inside the sandbox.
        size (str | Unset): Size in bytes.
        symlink_target (str | Unset): The target, for a symlink.
        type_ (FileInfoType | Unset): The kind.
        uid (int | Unset): Owner uid inside the sandbox.
    """

    gid: int | Unset = UNSET
    mode: int | Unset = UNSET
    modify_time: datetime.datetime | Unset = UNSET
    name: str | Unset = UNSET
    path: str | Unset = UNSET
    size: str | Unset = UNSET
    symlink_target: str | Unset = UNSET
    type_: FileInfoType | Unset = UNSET
    uid: int | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        gid = self.gid

        mode = self.mode

        modify_time: str | Unset = UNSET
        if not isinstance(self.modify_time, Unset):
            modify_time = self.modify_time.isoformat()

        name = self.name

        path = self.path

        size = self.size

        symlink_target = self.symlink_target

        type_: str | Unset = UNSET
        if not isinstance(self.type_, Unset):
            type_ = self.type_.value

        uid = self.uid

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if gid is not UNSET:
            field_dict["gid"] = gid
        if mode is not UNSET:
            field_dict["mode"] = mode
        if modify_time is not UNSET:
            field_dict["modifyTime"] = modify_time
        if name is not UNSET:
            field_dict["name"] = name
        if path is not UNSET:
            field_dict["path"] = path
        if size is not UNSET:
            field_dict["size"] = size
        if symlink_target is not UNSET:
            field_dict["symlinkTarget"] = symlink_target
        if type_ is not UNSET:
            field_dict["type"] = type_
        if uid is not UNSET:
            field_dict["uid"] = uid

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        gid = d.pop("gid", UNSET)

        mode = d.pop("mode", UNSET)

        _modify_time = d.pop("modifyTime", UNSET)
        modify_time: datetime.datetime | Unset
        if isinstance(_modify_time, Unset):
            modify_time = UNSET
        else:
            modify_time = datetime.datetime.fromisoformat(_modify_time)

        name = d.pop("name", UNSET)

        path = d.pop("path", UNSET)

        size = d.pop("size", UNSET)

        symlink_target = d.pop("symlinkTarget", UNSET)

        _type_ = d.pop("type", UNSET)
        type_: FileInfoType | Unset
        if isinstance(_type_, Unset):
            type_ = UNSET
        else:
            type_ = FileInfoType(_type_)

        uid = d.pop("uid", UNSET)

        file_info = cls(
            gid=gid,
            mode=mode,
            modify_time=modify_time,
            name=name,
            path=path,
            size=size,
            symlink_target=symlink_target,
            type_=type_,
            uid=uid,
        )

        file_info.additional_properties = d
        return file_info

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
