from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="DrainWorkerRequest")


@_attrs_define
class DrainWorkerRequest:
    """Request for DrainWorker.

    Attributes:
        undrain (bool | Unset): Resume placing instead.
        worker_id (str | Unset): The worker.
    """

    undrain: bool | Unset = UNSET
    worker_id: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        undrain = self.undrain

        worker_id = self.worker_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if undrain is not UNSET:
            field_dict["undrain"] = undrain
        if worker_id is not UNSET:
            field_dict["workerId"] = worker_id

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        undrain = d.pop("undrain", UNSET)

        worker_id = d.pop("workerId", UNSET)

        drain_worker_request = cls(
            undrain=undrain,
            worker_id=worker_id,
        )

        drain_worker_request.additional_properties = d
        return drain_worker_request

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
