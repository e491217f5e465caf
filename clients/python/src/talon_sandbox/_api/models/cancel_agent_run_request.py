from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="CancelAgentRunRequest")


@_attrs_define
class CancelAgentRunRequest:
    """Request for CancelAgentRun.

    Attributes:
        run_id (str | Unset): The run.
        sandbox_id (str | Unset): The sandbox.
    """

    run_id: str | Unset = UNSET
    sandbox_id: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        run_id = self.run_id

        sandbox_id = self.sandbox_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if run_id is not UNSET:
            field_dict["runId"] = run_id
        if sandbox_id is not UNSET:
            field_dict["sandboxId"] = sandbox_id

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        run_id = d.pop("runId", UNSET)

        sandbox_id = d.pop("sandboxId", UNSET)

        cancel_agent_run_request = cls(
            run_id=run_id,
            sandbox_id=sandbox_id,
        )

        cancel_agent_run_request.additional_properties = d
        return cancel_agent_run_request

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
