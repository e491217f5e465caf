from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.process_exited import ProcessExited
    from ..models.process_output import ProcessOutput
    from ..models.process_started import ProcessStarted


T = TypeVar("T", bound="ProcessEvent")


@_attrs_define
class ProcessEvent:
    """One event of a process's life.

    Attributes:
        exited (ProcessExited | Unset): The process ended.
        output (ProcessOutput | Unset): A chunk of output. Sequence numbers count chunks per process from 1, over
             stdout and stderr together, so a reader can resume without loss or
             duplication.
        started (ProcessStarted | Unset): The process started.
    """

    exited: ProcessExited | Unset = UNSET
    output: ProcessOutput | Unset = UNSET
    started: ProcessStarted | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        exited: dict[str, Any] | Unset = UNSET
        if not isinstance(self.exited, Unset):
            exited = self.exited.to_dict()

        output: dict[str, Any] | Unset = UNSET
        if not isinstance(self.output, Unset):
            output = self.output.to_dict()

        started: dict[str, Any] | Unset = UNSET
        if not isinstance(self.started, Unset):
            started = self.started.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if exited is not UNSET:
            field_dict["exited"] = exited
        if output is not UNSET:
            field_dict["output"] = output
        if started is not UNSET:
            field_dict["started"] = started

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.process_exited import ProcessExited  # noqa: PLC0415
        from ..models.process_output import ProcessOutput  # noqa: PLC0415
        from ..models.process_started import ProcessStarted  # noqa: PLC0415

        d = dict(src_dict)
        _exited = d.pop("exited", UNSET)
        exited: ProcessExited | Unset
        if isinstance(_exited, Unset):
            exited = UNSET
        else:
            exited = ProcessExited.from_dict(_exited)

        _output = d.pop("output", UNSET)
        output: ProcessOutput | Unset
        if isinstance(_output, Unset):
            output = UNSET
        else:
            output = ProcessOutput.from_dict(_output)

        _started = d.pop("started", UNSET)
        started: ProcessStarted | Unset
        if isinstance(_started, Unset):
            started = UNSET
        else:
            started = ProcessStarted.from_dict(_started)

        process_event = cls(
            exited=exited,
            output=output,
            started=started,
        )

        process_event.additional_properties = d
        return process_event

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
