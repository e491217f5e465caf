from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.worker_sandbox_isolation import WorkerSandboxIsolation
from ..models.worker_sandbox_state import WorkerSandboxState
from ..models.worker_sandbox_worker_loss_action import WorkerSandboxWorkerLossAction
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.resources import Resources


T = TypeVar("T", bound="WorkerSandbox")


@_attrs_define
class WorkerSandbox:
    """A sandbox as its worker holds it, for platform admins.

    Attributes:
        create_time (datetime.datetime | Unset): When it was created.
        generation (str | Unset): Its generation.
        image (str | Unset): Its image.
        isolation (WorkerSandboxIsolation | Unset): Its isolation level.
        resources (Resources | Unset): Compute resources of one sandbox. Zero means "the server's default".
        sandbox_id (str | Unset): The sandbox.
        state (WorkerSandboxState | Unset): Its state.
        tenant_id (str | Unset): Its tenant.
        worker_loss_action (WorkerSandboxWorkerLossAction | Unset): What happens to it if its worker is lost.
    """

    create_time: datetime.datetime | Unset = UNSET
    generation: str | Unset = UNSET
    image: str | Unset = UNSET
    isolation: WorkerSandboxIsolation | Unset = UNSET
    resources: Resources | Unset = UNSET
    sandbox_id: str | Unset = UNSET
    state: WorkerSandboxState | Unset = UNSET
    tenant_id: str | Unset = UNSET
    worker_loss_action: WorkerSandboxWorkerLossAction | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        create_time: str | Unset = UNSET
        if not isinstance(self.create_time, Unset):
            create_time = self.create_time.isoformat()

        generation = self.generation

        image = self.image

        isolation: str | Unset = UNSET
        if not isinstance(self.isolation, Unset):
            isolation = self.isolation.value

        resources: dict[str, Any] | Unset = UNSET
        if not isinstance(self.resources, Unset):
            resources = self.resources.to_dict()

        sandbox_id = self.sandbox_id

        state: str | Unset = UNSET
        if not isinstance(self.state, Unset):
            state = self.state.value

        tenant_id = self.tenant_id

        worker_loss_action: str | Unset = UNSET
        if not isinstance(self.worker_loss_action, Unset):
            worker_loss_action = self.worker_loss_action.value

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if create_time is not UNSET:
            field_dict["createTime"] = create_time
        if generation is not UNSET:
            field_dict["generation"] = generation
        if image is not UNSET:
            field_dict["image"] = image
        if isolation is not UNSET:
            field_dict["isolation"] = isolation
        if resources is not UNSET:
            field_dict["resources"] = resources
        if sandbox_id is not UNSET:
            field_dict["sandboxId"] = sandbox_id
        if state is not UNSET:
            field_dict["state"] = state
        if tenant_id is not UNSET:
            field_dict["tenantId"] = tenant_id
        if worker_loss_action is not UNSET:
            field_dict["workerLossAction"] = worker_loss_action

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.resources import Resources  # noqa: PLC0415

        d = dict(src_dict)
        _create_time = d.pop("createTime", UNSET)
        create_time: datetime.datetime | Unset
        if isinstance(_create_time, Unset):
            create_time = UNSET
        else:
            create_time = datetime.datetime.fromisoformat(_create_time)

        generation = d.pop("generation", UNSET)

        image = d.pop("image", UNSET)

        _isolation = d.pop("isolation", UNSET)
        isolation: WorkerSandboxIsolation | Unset
        if isinstance(_isolation, Unset):
            isolation = UNSET
        else:
            isolation = WorkerSandboxIsolation(_isolation)

        _resources = d.pop("resources", UNSET)
        resources: Resources | Unset
        if isinstance(_resources, Unset):
            resources = UNSET
        else:
            resources = Resources.from_dict(_resources)

        sandbox_id = d.pop("sandboxId", UNSET)

        _state = d.pop("state", UNSET)
        state: WorkerSandboxState | Unset
        if isinstance(_state, Unset):
            state = UNSET
        else:
            state = WorkerSandboxState(_state)

        tenant_id = d.pop("tenantId", UNSET)

        _worker_loss_action = d.pop("workerLossAction", UNSET)
        worker_loss_action: WorkerSandboxWorkerLossAction | Unset
        if isinstance(_worker_loss_action, Unset):
            worker_loss_action = UNSET
        else:
            worker_loss_action = WorkerSandboxWorkerLossAction(_worker_loss_action)

        worker_sandbox = cls(
            create_time=create_time,
            generation=generation,
            image=image,
            isolation=isolation,
            resources=resources,
            sandbox_id=sandbox_id,
            state=state,
            tenant_id=tenant_id,
            worker_loss_action=worker_loss_action,
        )

        worker_sandbox.additional_properties = d
        return worker_sandbox

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
