from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="ProcessInfo")


@_attrs_define
class ProcessInfo:
    """A process as listed.

    Attributes:
        command (list[str] | Unset): argv.
        cwd (str | Unset): Working directory.
        exit_code (int | Unset): Exit code, when it has ended.
        pid (int | Unset): The pid.
        pty (bool | Unset): Runs under a PTY.
        running (bool | Unset): Still running.
        start_time (datetime.datetime | Unset): When it started.
        tag (str | Unset): The tag.
    """

    command: list[str] | Unset = UNSET
    cwd: str | Unset = UNSET
    exit_code: int | Unset = UNSET
    pid: int | Unset = UNSET
    pty: bool | Unset = UNSET
    running: bool | Unset = UNSET
    start_time: datetime.datetime | Unset = UNSET
    tag: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        command: list[str] | Unset = UNSET
        if not isinstance(self.command, Unset):
            command = self.command

        cwd = self.cwd

        exit_code = self.exit_code

        pid = self.pid

        pty = self.pty

        running = self.running

        start_time: str | Unset = UNSET
        if not isinstance(self.start_time, Unset):
            start_time = self.start_time.isoformat()

        tag = self.tag

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if command is not UNSET:
            field_dict["command"] = command
        if cwd is not UNSET:
            field_dict["cwd"] = cwd
        if exit_code is not UNSET:
            field_dict["exitCode"] = exit_code
        if pid is not UNSET:
            field_dict["pid"] = pid
        if pty is not UNSET:
            field_dict["pty"] = pty
        if running is not UNSET:
            field_dict["running"] = running
        if start_time is not UNSET:
            field_dict["startTime"] = start_time
        if tag is not UNSET:
            field_dict["tag"] = tag

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        command = cast(list[str], d.pop("command", UNSET))

        cwd = d.pop("cwd", UNSET)

        exit_code = d.pop("exitCode", UNSET)

        pid = d.pop("pid", UNSET)

        pty = d.pop("pty", UNSET)

        running = d.pop("running", UNSET)

        _start_time = d.pop("startTime", UNSET)
        start_time: datetime.datetime | Unset
        if isinstance(_start_time, Unset):
            start_time = UNSET
        else:
            start_time = datetime.datetime.fromisoformat(_start_time)

        tag = d.pop("tag", UNSET)

        process_info = cls(
            command=command,
            cwd=cwd,
            exit_code=exit_code,
            pid=pid,
            pty=pty,
            running=running,
            start_time=start_time,
            tag=tag,
        )

        process_info.additional_properties = d
        return process_info

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
