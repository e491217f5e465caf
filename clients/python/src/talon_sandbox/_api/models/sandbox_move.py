from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.sandbox_move_cause import SandboxMoveCause
from ..types import UNSET, Unset

T = TypeVar("T", bound="SandboxMove")


@_attrs_define
class SandboxMove:
    """One move of a sandbox.

    Attributes:
        cause (SandboxMoveCause | Unset): Why.
        from_worker_id (str | Unset): The worker it was on.
        generation (str | Unset): Its generation from then on.
        move_time (datetime.datetime | Unset): When.
        sandbox_id (str | Unset): The sandbox.
        tenant_id (str | Unset): Its tenant.
        to_worker_id (str | Unset): The worker it went to; the same as `from_worker_id` when it was
             started again in place (no other worker had room).
        workspace_kept (bool | Unset): Its workspace came along (both workers on the shared backend, or in
             place on it); otherwise it started with an empty one.
    """

    cause: SandboxMoveCause | Unset = UNSET
    from_worker_id: str | Unset = UNSET
    generation: str | Unset = UNSET
    move_time: datetime.datetime | Unset = UNSET
    sandbox_id: str | Unset = UNSET
    tenant_id: str | Unset = UNSET
    to_worker_id: str | Unset = UNSET
    workspace_kept: bool | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        cause: str | Unset = UNSET
        if not isinstance(self.cause, Unset):
            cause = self.cause.value

        from_worker_id = self.from_worker_id

        generation = self.generation

        move_time: str | Unset = UNSET
        if not isinstance(self.move_time, Unset):
            move_time = self.move_time.isoformat()

        sandbox_id = self.sandbox_id

        tenant_id = self.tenant_id

        to_worker_id = self.to_worker_id

        workspace_kept = self.workspace_kept

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if cause is not UNSET:
            field_dict["cause"] = cause
        if from_worker_id is not UNSET:
            field_dict["fromWorkerId"] = from_worker_id
        if generation is not UNSET:
            field_dict["generation"] = generation
        if move_time is not UNSET:
            field_dict["moveTime"] = move_time
        if sandbox_id is not UNSET:
            field_dict["sandboxId"] = sandbox_id
        if tenant_id is not UNSET:
            field_dict["tenantId"] = tenant_id
        if to_worker_id is not UNSET:
            field_dict["toWorkerId"] = to_worker_id
        if workspace_kept is not UNSET:
            field_dict["workspaceKept"] = workspace_kept

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        _cause = d.pop("cause", UNSET)
        cause: SandboxMoveCause | Unset
        if isinstance(_cause, Unset):
            cause = UNSET
        else:
            cause = SandboxMoveCause(_cause)

        from_worker_id = d.pop("fromWorkerId", UNSET)

        generation = d.pop("generation", UNSET)

        _move_time = d.pop("moveTime", UNSET)
        move_time: datetime.datetime | Unset
        if isinstance(_move_time, Unset):
            move_time = UNSET
        else:
            move_time = datetime.datetime.fromisoformat(_move_time)

        sandbox_id = d.pop("sandboxId", UNSET)

        tenant_id = d.pop("tenantId", UNSET)

        to_worker_id = d.pop("toWorkerId", UNSET)

        workspace_kept = d.pop("workspaceKept", UNSET)

        sandbox_move = cls(
            cause=cause,
            from_worker_id=from_worker_id,
            generation=generation,
            move_time=move_time,
            sandbox_id=sandbox_id,
            tenant_id=tenant_id,
            to_worker_id=to_worker_id,
            workspace_kept=workspace_kept,
        )

        sandbox_move.additional_properties = d
        return sandbox_move

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
