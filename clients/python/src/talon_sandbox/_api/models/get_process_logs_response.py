from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.log_entry import LogEntry


T = TypeVar("T", bound="GetProcessLogsResponse")


@_attrs_define
class GetProcessLogsResponse:
    """Response of GetProcessLogs.

    Attributes:
        entries (list[LogEntry] | Unset): The chunks, in order.
        first_kept_seq (str | Unset): Chunks before this sequence number were rotated away.
        has_more (bool | Unset): More chunks are kept after this page.
        next_after_seq (str | Unset): Pass as `after_seq` for the next page.
    """

    entries: list[LogEntry] | Unset = UNSET
    first_kept_seq: str | Unset = UNSET
    has_more: bool | Unset = UNSET
    next_after_seq: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        entries: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.entries, Unset):
            entries = []
            for entries_item_data in self.entries:
                entries_item = entries_item_data.to_dict()
                entries.append(entries_item)

        first_kept_seq = self.first_kept_seq

        has_more = self.has_more

        next_after_seq = self.next_after_seq

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if entries is not UNSET:
            field_dict["entries"] = entries
        if first_kept_seq is not UNSET:
            field_dict["firstKeptSeq"] = first_kept_seq
        if has_more is not UNSET:
            field_dict["hasMore"] = has_more
        if next_after_seq is not UNSET:
            field_dict["nextAfterSeq"] = next_after_seq

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.log_entry import LogEntry  # noqa: PLC0415

        d = dict(src_dict)
        _entries = d.pop("entries", UNSET)
        entries: list[LogEntry] | Unset = UNSET
        if _entries is not UNSET:
            entries = []
            for entries_item_data in _entries:
                entries_item = LogEntry.from_dict(entries_item_data)

                entries.append(entries_item)

        first_kept_seq = d.pop("firstKeptSeq", UNSET)

        has_more = d.pop("hasMore", UNSET)

        next_after_seq = d.pop("nextAfterSeq", UNSET)

        get_process_logs_response = cls(
            entries=entries,
            first_kept_seq=first_kept_seq,
            has_more=has_more,
            next_after_seq=next_after_seq,
        )

        get_process_logs_response.additional_properties = d
        return get_process_logs_response

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
