from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.get_platform_metrics_response_sandboxes_by_state import (
        GetPlatformMetricsResponseSandboxesByState,
    )
    from ..models.get_platform_metrics_response_workers_by_state import (
        GetPlatformMetricsResponseWorkersByState,
    )
    from ..models.metric_family import MetricFamily


T = TypeVar("T", bound="GetPlatformMetricsResponse")


@_attrs_define
class GetPlatformMetricsResponse:
    """Response of GetPlatformMetrics.

    Attributes:
        families (list[MetricFamily] | Unset): The server's figures.
        sample_time (datetime.datetime | Unset): When.
        sandboxes_by_state (GetPlatformMetricsResponseSandboxesByState | Unset): Sandboxes by state, across tenants,
            e.g. {"SANDBOX_STATE_RUNNING": 4}.
        server_id (str | Unset): The server that counted the families.
        workers_by_state (GetPlatformMetricsResponseWorkersByState | Unset): Workers by state, e.g.
            {"WORKER_STATE_ACTIVE": 1}.
    """

    families: list[MetricFamily] | Unset = UNSET
    sample_time: datetime.datetime | Unset = UNSET
    sandboxes_by_state: GetPlatformMetricsResponseSandboxesByState | Unset = UNSET
    server_id: str | Unset = UNSET
    workers_by_state: GetPlatformMetricsResponseWorkersByState | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        families: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.families, Unset):
            families = []
            for families_item_data in self.families:
                families_item = families_item_data.to_dict()
                families.append(families_item)

        sample_time: str | Unset = UNSET
        if not isinstance(self.sample_time, Unset):
            sample_time = self.sample_time.isoformat()

        sandboxes_by_state: dict[str, Any] | Unset = UNSET
        if not isinstance(self.sandboxes_by_state, Unset):
            sandboxes_by_state = self.sandboxes_by_state.to_dict()

        server_id = self.server_id

        workers_by_state: dict[str, Any] | Unset = UNSET
        if not isinstance(self.workers_by_state, Unset):
            workers_by_state = self.workers_by_state.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if families is not UNSET:
            field_dict["families"] = families
        if sample_time is not UNSET:
            field_dict["sampleTime"] = sample_time
        if sandboxes_by_state is not UNSET:
            field_dict["sandboxesByState"] = sandboxes_by_state
        if server_id is not UNSET:
            field_dict["serverId"] = server_id
        if workers_by_state is not UNSET:
            field_dict["workersByState"] = workers_by_state

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.get_platform_metrics_response_sandboxes_by_state import (
            GetPlatformMetricsResponseSandboxesByState,  # noqa: PLC0415
        )
        from ..models.get_platform_metrics_response_workers_by_state import (
            GetPlatformMetricsResponseWorkersByState,  # noqa: PLC0415
        )
        from ..models.metric_family import MetricFamily  # noqa: PLC0415

        d = dict(src_dict)
        _families = d.pop("families", UNSET)
        families: list[MetricFamily] | Unset = UNSET
        if _families is not UNSET:
            families = []
            for families_item_data in _families:
                families_item = MetricFamily.from_dict(families_item_data)

                families.append(families_item)

        _sample_time = d.pop("sampleTime", UNSET)
        sample_time: datetime.datetime | Unset
        if isinstance(_sample_time, Unset):
            sample_time = UNSET
        else:
            sample_time = datetime.datetime.fromisoformat(_sample_time)

        _sandboxes_by_state = d.pop("sandboxesByState", UNSET)
        sandboxes_by_state: GetPlatformMetricsResponseSandboxesByState | Unset
        if isinstance(_sandboxes_by_state, Unset):
            sandboxes_by_state = UNSET
        else:
            sandboxes_by_state = GetPlatformMetricsResponseSandboxesByState.from_dict(
                _sandboxes_by_state
            )

        server_id = d.pop("serverId", UNSET)

        _workers_by_state = d.pop("workersByState", UNSET)
        workers_by_state: GetPlatformMetricsResponseWorkersByState | Unset
        if isinstance(_workers_by_state, Unset):
            workers_by_state = UNSET
        else:
            workers_by_state = GetPlatformMetricsResponseWorkersByState.from_dict(
                _workers_by_state
            )

        get_platform_metrics_response = cls(
            families=families,
            sample_time=sample_time,
            sandboxes_by_state=sandboxes_by_state,
            server_id=server_id,
            workers_by_state=workers_by_state,
        )

        get_platform_metrics_response.additional_properties = d
        return get_platform_metrics_response

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
