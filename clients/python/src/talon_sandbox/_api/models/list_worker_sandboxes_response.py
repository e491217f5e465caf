from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.worker_sandbox import WorkerSandbox


T = TypeVar("T", bound="ListWorkerSandboxesResponse")


@_attrs_define
class ListWorkerSandboxesResponse:
    """Response of ListWorkerSandboxes.

    Attributes:
        next_page_token (str | Unset): Empty on the last page.
        sandboxes (list[WorkerSandbox] | Unset): One page.
    """

    next_page_token: str | Unset = UNSET
    sandboxes: list[WorkerSandbox] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        next_page_token = self.next_page_token

        sandboxes: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.sandboxes, Unset):
            sandboxes = []
            for sandboxes_item_data in self.sandboxes:
                sandboxes_item = sandboxes_item_data.to_dict()
                sandboxes.append(sandboxes_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if next_page_token is not UNSET:
            field_dict["nextPageToken"] = next_page_token
        if sandboxes is not UNSET:
            field_dict["sandboxes"] = sandboxes

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.worker_sandbox import WorkerSandbox  # noqa: PLC0415

        d = dict(src_dict)
        next_page_token = d.pop("nextPageToken", UNSET)

        _sandboxes = d.pop("sandboxes", UNSET)
        sandboxes: list[WorkerSandbox] | Unset = UNSET
        if _sandboxes is not UNSET:
            sandboxes = []
            for sandboxes_item_data in _sandboxes:
                sandboxes_item = WorkerSandbox.from_dict(sandboxes_item_data)

                sandboxes.append(sandboxes_item)

        list_worker_sandboxes_response = cls(
            next_page_token=next_page_token,
            sandboxes=sandboxes,
        )

        list_worker_sandboxes_response.additional_properties = d
        return list_worker_sandboxes_response

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
