from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.log_entry import LogEntry
    from ..models.process_exited import ProcessExited


T = TypeVar("T", bound="FollowProcessLogsResponse")


@_attrs_define
class FollowProcessLogsResponse:
    """Response of FollowProcessLogs: one chunk, or the exit at the end.

    Attributes:
        entry (LogEntry | Unset): One kept chunk of output.
        exited (ProcessExited | Unset): The process ended.
    """

    entry: LogEntry | Unset = UNSET
    exited: ProcessExited | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        entry: dict[str, Any] | Unset = UNSET
        if not isinstance(self.entry, Unset):
            entry = self.entry.to_dict()

        exited: dict[str, Any] | Unset = UNSET
        if not isinstance(self.exited, Unset):
            exited = self.exited.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if entry is not UNSET:
            field_dict["entry"] = entry
        if exited is not UNSET:
            field_dict["exited"] = exited

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.log_entry import LogEntry  # noqa: PLC0415
        from ..models.process_exited import ProcessExited  # noqa: PLC0415

        d = dict(src_dict)
        _entry = d.pop("entry", UNSET)
        entry: LogEntry | Unset
        if isinstance(_entry, Unset):
            entry = UNSET
        else:
            entry = LogEntry.from_dict(_entry)

        _exited = d.pop("exited", UNSET)
        exited: ProcessExited | Unset
        if isinstance(_exited, Unset):
            exited = UNSET
        else:
            exited = ProcessExited.from_dict(_exited)

        follow_process_logs_response = cls(
            entry=entry,
            exited=exited,
        )

        follow_process_logs_response.additional_properties = d
        return follow_process_logs_response

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
