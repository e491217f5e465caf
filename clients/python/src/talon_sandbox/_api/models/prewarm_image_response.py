from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="PrewarmImageResponse")


@_attrs_define
class PrewarmImageResponse:
    """Response of PrewarmImage: progress on one worker.

    Attributes:
        bytes_done (str | Unset): Bytes done.
        bytes_total (str | Unset): Bytes in all, when known.
        message (str | Unset): Why the worker could not pool ("failed" phase).
        phase (str | Unset): What is happening, e.g. "unpacking", "pooling", "done".
        pool_ready (int | Unset): Pooled sandboxes ready.
        worker_id (str | Unset): The worker.
    """

    bytes_done: str | Unset = UNSET
    bytes_total: str | Unset = UNSET
    message: str | Unset = UNSET
    phase: str | Unset = UNSET
    pool_ready: int | Unset = UNSET
    worker_id: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        bytes_done = self.bytes_done

        bytes_total = self.bytes_total

        message = self.message

        phase = self.phase

        pool_ready = self.pool_ready

        worker_id = self.worker_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if bytes_done is not UNSET:
            field_dict["bytesDone"] = bytes_done
        if bytes_total is not UNSET:
            field_dict["bytesTotal"] = bytes_total
        if message is not UNSET:
            field_dict["message"] = message
        if phase is not UNSET:
            field_dict["phase"] = phase
        if pool_ready is not UNSET:
            field_dict["poolReady"] = pool_ready
        if worker_id is not UNSET:
            field_dict["workerId"] = worker_id

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        bytes_done = d.pop("bytesDone", UNSET)

        bytes_total = d.pop("bytesTotal", UNSET)

        message = d.pop("message", UNSET)

        phase = d.pop("phase", UNSET)

        pool_ready = d.pop("poolReady", UNSET)

        worker_id = d.pop("workerId", UNSET)

        prewarm_image_response = cls(
            bytes_done=bytes_done,
            bytes_total=bytes_total,
            message=message,
            phase=phase,
            pool_ready=pool_ready,
            worker_id=worker_id,
        )

        prewarm_image_response.additional_properties = d
        return prewarm_image_response

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
