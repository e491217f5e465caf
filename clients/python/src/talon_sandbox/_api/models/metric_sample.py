from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.metric_sample_labels import MetricSampleLabels


T = TypeVar("T", bound="MetricSample")


@_attrs_define
class MetricSample:
    """One series of a metric.

    Attributes:
        count (str | Unset): Observations of a histogram.
        labels (MetricSampleLabels | Unset): Its labels, e.g. {"method": "/talon.v1.SandboxService/CreateSandbox"}.
        sum_ (float | Unset): Their sum (seconds, for durations).
        value (float | Unset): The value of a counter or a gauge.
    """

    count: str | Unset = UNSET
    labels: MetricSampleLabels | Unset = UNSET
    sum_: float | Unset = UNSET
    value: float | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        count = self.count

        labels: dict[str, Any] | Unset = UNSET
        if not isinstance(self.labels, Unset):
            labels = self.labels.to_dict()

        sum_ = self.sum_

        value = self.value

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if count is not UNSET:
            field_dict["count"] = count
        if labels is not UNSET:
            field_dict["labels"] = labels
        if sum_ is not UNSET:
            field_dict["sum"] = sum_
        if value is not UNSET:
            field_dict["value"] = value

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.metric_sample_labels import MetricSampleLabels  # noqa: PLC0415

        d = dict(src_dict)
        count = d.pop("count", UNSET)

        _labels = d.pop("labels", UNSET)
        labels: MetricSampleLabels | Unset
        if isinstance(_labels, Unset):
            labels = UNSET
        else:
            labels = MetricSampleLabels.from_dict(_labels)

        sum_ = d.pop("sum", UNSET)

        value = d.pop("value", UNSET)

        metric_sample = cls(
            count=count,
            labels=labels,
            sum_=sum_,
            value=value,
        )

        metric_sample.additional_properties = d
        return metric_sample

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
