from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.worker_failover_scope import WorkerFailoverScope
from ..models.worker_state import WorkerState
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.worker_capacity import WorkerCapacity


T = TypeVar("T", bound="Worker")


@_attrs_define
class Worker:
    """A worker.

    Attributes:
        allocated (WorkerCapacity | Unset): Capacity of a worker.
        capacity (WorkerCapacity | Unset): Capacity of a worker.
        failover_scope (WorkerFailoverScope | Unset): Which of its sandboxes would move were it lost now, as the worker
             last reported applying it.
        hostname (str | Unset): Host name.
        last_heartbeat_time (datetime.datetime | Unset): Last heartbeat.
        last_lost_time (datetime.datetime | Unset): When it was last found lost (its lease lapsed); unset if never.
        lease_expire_time (datetime.datetime | Unset): Until when its lease holds (renewed by its heartbeats).
        register_time (datetime.datetime | Unset): First registration.
        runtimes (list[str] | Unset): Runtime adapters it offers, e.g. "libcontainer", "runc".
        state (WorkerState | Unset): State.
        version (str | Unset): Its software version.
        worker_id (str | Unset): Stable id, chosen by the worker.
        workspace_backend (str | Unset): Where its sandboxes' disks live: `local` or `shared`.
    """

    allocated: WorkerCapacity | Unset = UNSET
    capacity: WorkerCapacity | Unset = UNSET
    failover_scope: WorkerFailoverScope | Unset = UNSET
    hostname: str | Unset = UNSET
    last_heartbeat_time: datetime.datetime | Unset = UNSET
    last_lost_time: datetime.datetime | Unset = UNSET
    lease_expire_time: datetime.datetime | Unset = UNSET
    register_time: datetime.datetime | Unset = UNSET
    runtimes: list[str] | Unset = UNSET
    state: WorkerState | Unset = UNSET
    version: str | Unset = UNSET
    worker_id: str | Unset = UNSET
    workspace_backend: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        allocated: dict[str, Any] | Unset = UNSET
        if not isinstance(self.allocated, Unset):
            allocated = self.allocated.to_dict()

        capacity: dict[str, Any] | Unset = UNSET
        if not isinstance(self.capacity, Unset):
            capacity = self.capacity.to_dict()

        failover_scope: str | Unset = UNSET
        if not isinstance(self.failover_scope, Unset):
            failover_scope = self.failover_scope.value

        hostname = self.hostname

        last_heartbeat_time: str | Unset = UNSET
        if not isinstance(self.last_heartbeat_time, Unset):
            last_heartbeat_time = self.last_heartbeat_time.isoformat()

        last_lost_time: str | Unset = UNSET
        if not isinstance(self.last_lost_time, Unset):
            last_lost_time = self.last_lost_time.isoformat()

        lease_expire_time: str | Unset = UNSET
        if not isinstance(self.lease_expire_time, Unset):
            lease_expire_time = self.lease_expire_time.isoformat()

        register_time: str | Unset = UNSET
        if not isinstance(self.register_time, Unset):
            register_time = self.register_time.isoformat()

        runtimes: list[str] | Unset = UNSET
        if not isinstance(self.runtimes, Unset):
            runtimes = self.runtimes

        state: str | Unset = UNSET
        if not isinstance(self.state, Unset):
            state = self.state.value

        version = self.version

        worker_id = self.worker_id

        workspace_backend = self.workspace_backend

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if allocated is not UNSET:
            field_dict["allocated"] = allocated
        if capacity is not UNSET:
            field_dict["capacity"] = capacity
        if failover_scope is not UNSET:
            field_dict["failoverScope"] = failover_scope
        if hostname is not UNSET:
            field_dict["hostname"] = hostname
        if last_heartbeat_time is not UNSET:
            field_dict["lastHeartbeatTime"] = last_heartbeat_time
        if last_lost_time is not UNSET:
            field_dict["lastLostTime"] = last_lost_time
        if lease_expire_time is not UNSET:
            field_dict["leaseExpireTime"] = lease_expire_time
        if register_time is not UNSET:
            field_dict["registerTime"] = register_time
        if runtimes is not UNSET:
            field_dict["runtimes"] = runtimes
        if state is not UNSET:
            field_dict["state"] = state
        if version is not UNSET:
            field_dict["version"] = version
        if worker_id is not UNSET:
            field_dict["workerId"] = worker_id
        if workspace_backend is not UNSET:
            field_dict["workspaceBackend"] = workspace_backend

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.worker_capacity import WorkerCapacity  # noqa: PLC0415

        d = dict(src_dict)
        _allocated = d.pop("allocated", UNSET)
        allocated: WorkerCapacity | Unset
        if isinstance(_allocated, Unset):
            allocated = UNSET
        else:
            allocated = WorkerCapacity.from_dict(_allocated)

        _capacity = d.pop("capacity", UNSET)
        capacity: WorkerCapacity | Unset
        if isinstance(_capacity, Unset):
            capacity = UNSET
        else:
            capacity = WorkerCapacity.from_dict(_capacity)

        _failover_scope = d.pop("failoverScope", UNSET)
        failover_scope: WorkerFailoverScope | Unset
        if isinstance(_failover_scope, Unset):
            failover_scope = UNSET
        else:
            failover_scope = WorkerFailoverScope(_failover_scope)

        hostname = d.pop("hostname", UNSET)

        _last_heartbeat_time = d.pop("lastHeartbeatTime", UNSET)
        last_heartbeat_time: datetime.datetime | Unset
        if isinstance(_last_heartbeat_time, Unset):
            last_heartbeat_time = UNSET
        else:
            last_heartbeat_time = datetime.datetime.fromisoformat(_last_heartbeat_time)

        _last_lost_time = d.pop("lastLostTime", UNSET)
        last_lost_time: datetime.datetime | Unset
        if isinstance(_last_lost_time, Unset):
            last_lost_time = UNSET
        else:
            last_lost_time = datetime.datetime.fromisoformat(_last_lost_time)

        _lease_expire_time = d.pop("leaseExpireTime", UNSET)
        lease_expire_time: datetime.datetime | Unset
        if isinstance(_lease_expire_time, Unset):
            lease_expire_time = UNSET
        else:
            lease_expire_time = datetime.datetime.fromisoformat(_lease_expire_time)

        _register_time = d.pop("registerTime", UNSET)
        register_time: datetime.datetime | Unset
        if isinstance(_register_time, Unset):
            register_time = UNSET
        else:
            register_time = datetime.datetime.fromisoformat(_register_time)

        runtimes = cast(list[str], d.pop("runtimes", UNSET))

        _state = d.pop("state", UNSET)
        state: WorkerState | Unset
        if isinstance(_state, Unset):
            state = UNSET
        else:
            state = WorkerState(_state)

        version = d.pop("version", UNSET)

        worker_id = d.pop("workerId", UNSET)

        workspace_backend = d.pop("workspaceBackend", UNSET)

        worker = cls(
            allocated=allocated,
            capacity=capacity,
            failover_scope=failover_scope,
            hostname=hostname,
            last_heartbeat_time=last_heartbeat_time,
            last_lost_time=last_lost_time,
            lease_expire_time=lease_expire_time,
            register_time=register_time,
            runtimes=runtimes,
            state=state,
            version=version,
            worker_id=worker_id,
            workspace_backend=workspace_backend,
        )

        worker.additional_properties = d
        return worker

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
