from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.snapshot import Snapshot


T = TypeVar("T", bound="TakeSnapshotResponse")


@_attrs_define
class TakeSnapshotResponse:
    """Response of TakeSnapshot: one step of the copy.

    Attributes:
        bytes_done (str | Unset): Bytes of file content copied so far.
        bytes_total (str | Unset): About how many there are to copy: the bytes in use on the sandbox's
             disk when the copy began (a little more than the copy holds); 0 when
             not known.
        phase (str | Unset): "copying" (the sandbox's files into the worker's store; a running
             sandbox is frozen meanwhile), "publishing" (hashing them into
             layers, the sandbox running again), "sharing" (onto the shared
             storage, where there is one) or "done".
        snapshot (Snapshot | Unset): A copy of a sandbox's filesystem that new sandboxes start from.
    """

    bytes_done: str | Unset = UNSET
    bytes_total: str | Unset = UNSET
    phase: str | Unset = UNSET
    snapshot: Snapshot | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        bytes_done = self.bytes_done

        bytes_total = self.bytes_total

        phase = self.phase

        snapshot: dict[str, Any] | Unset = UNSET
        if not isinstance(self.snapshot, Unset):
            snapshot = self.snapshot.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if bytes_done is not UNSET:
            field_dict["bytesDone"] = bytes_done
        if bytes_total is not UNSET:
            field_dict["bytesTotal"] = bytes_total
        if phase is not UNSET:
            field_dict["phase"] = phase
        if snapshot is not UNSET:
            field_dict["snapshot"] = snapshot

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.snapshot import Snapshot  # noqa: PLC0415

        d = dict(src_dict)
        bytes_done = d.pop("bytesDone", UNSET)

        bytes_total = d.pop("bytesTotal", UNSET)

        phase = d.pop("phase", UNSET)

        _snapshot = d.pop("snapshot", UNSET)
        snapshot: Snapshot | Unset
        if isinstance(_snapshot, Unset):
            snapshot = UNSET
        else:
            snapshot = Snapshot.from_dict(_snapshot)

        take_snapshot_response = cls(
            bytes_done=bytes_done,
            bytes_total=bytes_total,
            phase=phase,
            snapshot=snapshot,
        )

        take_snapshot_response.additional_properties = d
        return take_snapshot_response

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
