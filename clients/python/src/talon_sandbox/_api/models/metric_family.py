from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.metric_family_kind import MetricFamilyKind
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.metric_sample import MetricSample


T = TypeVar("T", bound="MetricFamily")


@_attrs_define
class MetricFamily:
    """One metric, with its series.

    Attributes:
        help_ (str | Unset): What it counts.
        kind (MetricFamilyKind | Unset): Its kind.
        name (str | Unset): Its Prometheus name, e.g. "talon_rpc_requests_total".
        samples (list[MetricSample] | Unset): Its series.
    """

    help_: str | Unset = UNSET
    kind: MetricFamilyKind | Unset = UNSET
    name: str | Unset = UNSET
    samples: list[MetricSample] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        help_ = self.help_

        kind: str | Unset = UNSET
        if not isinstance(self.kind, Unset):
            kind = self.kind.value

        name = self.name

        samples: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.samples, Unset):
            samples = []
            for samples_item_data in self.samples:
                samples_item = samples_item_data.to_dict()
                samples.append(samples_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if help_ is not UNSET:
            field_dict["help"] = help_
        if kind is not UNSET:
            field_dict["kind"] = kind
        if name is not UNSET:
            field_dict["name"] = name
        if samples is not UNSET:
            field_dict["samples"] = samples

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.metric_sample import MetricSample  # noqa: PLC0415

        d = dict(src_dict)
        help_ = d.pop("help", UNSET)

        _kind = d.pop("kind", UNSET)
        kind: MetricFamilyKind | Unset
        if isinstance(_kind, Unset):
            kind = UNSET
        else:
            kind = MetricFamilyKind(_kind)

        name = d.pop("name", UNSET)

        _samples = d.pop("samples", UNSET)
        samples: list[MetricSample] | Unset = UNSET
        if _samples is not UNSET:
            samples = []
            for samples_item_data in _samples:
                samples_item = MetricSample.from_dict(samples_item_data)

                samples.append(samples_item)

        metric_family = cls(
            help_=help_,
            kind=kind,
            name=name,
            samples=samples,
        )

        metric_family.additional_properties = d
        return metric_family

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
