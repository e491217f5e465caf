from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.agent_file_change_kind import AgentFileChangeKind
from ..types import UNSET, Unset

T = TypeVar("T", bound="AgentFileChange")


@_attrs_define
class AgentFileChange:
    """A file under /workspace changed during the task (changes to one path
    within a short window are reported once, with the last kind).

       Attributes:
           kind (AgentFileChangeKind | Unset): What happened to it.
           path (str | Unset): The path.
    """

    kind: AgentFileChangeKind | Unset = UNSET
    path: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        kind: str | Unset = UNSET
        if not isinstance(self.kind, Unset):
            kind = self.kind.value

        path = self.path

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if kind is not UNSET:
            field_dict["kind"] = kind
        if path is not UNSET:
            field_dict["path"] = path

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        _kind = d.pop("kind", UNSET)
        kind: AgentFileChangeKind | Unset
        if isinstance(_kind, Unset):
            kind = UNSET
        else:
            kind = AgentFileChangeKind(_kind)

        path = d.pop("path", UNSET)

        agent_file_change = cls(
            kind=kind,
            path=path,
        )

        agent_file_change.additional_properties = d
        return agent_file_change

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
