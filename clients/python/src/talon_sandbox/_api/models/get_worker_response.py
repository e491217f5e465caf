from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.worker import Worker


T = TypeVar("T", bound="GetWorkerResponse")


@_attrs_define
class GetWorkerResponse:
    """Response of GetWorker.

    Attributes:
        worker (Worker | Unset): A worker.
    """

    worker: Worker | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        worker: dict[str, Any] | Unset = UNSET
        if not isinstance(self.worker, Unset):
            worker = self.worker.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if worker is not UNSET:
            field_dict["worker"] = worker

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.worker import Worker  # noqa: PLC0415

        d = dict(src_dict)
        _worker = d.pop("worker", UNSET)
        worker: Worker | Unset
        if isinstance(_worker, Unset):
            worker = UNSET
        else:
            worker = Worker.from_dict(_worker)

        get_worker_response = cls(
            worker=worker,
        )

        get_worker_response.additional_properties = d
        return get_worker_response

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
