from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.agent_completed import AgentCompleted
    from ..models.agent_file_change import AgentFileChange
    from ..models.agent_output import AgentOutput
    from ..models.agent_started import AgentStarted


T = TypeVar("T", bound="RunAgentResponse")


@_attrs_define
class RunAgentResponse:
    """Response of RunAgent: one event.

    Attributes:
        completed (AgentCompleted | Unset): The task ended.
        event_time (datetime.datetime | Unset): When it happened.
        file_change (AgentFileChange | Unset): A file under /workspace changed during the task (changes to one path
             within a short window are reported once, with the last kind).
        output (AgentOutput | Unset): A line of the agent's output.
        seq (str | Unset): Its place in the run's events, from 1: ConnectAgentRun resumes after
             the last one a client saw.
        started (AgentStarted | Unset): The task started.
    """

    completed: AgentCompleted | Unset = UNSET
    event_time: datetime.datetime | Unset = UNSET
    file_change: AgentFileChange | Unset = UNSET
    output: AgentOutput | Unset = UNSET
    seq: str | Unset = UNSET
    started: AgentStarted | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        completed: dict[str, Any] | Unset = UNSET
        if not isinstance(self.completed, Unset):
            completed = self.completed.to_dict()

        event_time: str | Unset = UNSET
        if not isinstance(self.event_time, Unset):
            event_time = self.event_time.isoformat()

        file_change: dict[str, Any] | Unset = UNSET
        if not isinstance(self.file_change, Unset):
            file_change = self.file_change.to_dict()

        output: dict[str, Any] | Unset = UNSET
        if not isinstance(self.output, Unset):
            output = self.output.to_dict()

        seq = self.seq

        started: dict[str, Any] | Unset = UNSET
        if not isinstance(self.started, Unset):
            started = self.started.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if completed is not UNSET:
            field_dict["completed"] = completed
        if event_time is not UNSET:
            field_dict["eventTime"] = event_time
        if file_change is not UNSET:
            field_dict["fileChange"] = file_change
        if output is not UNSET:
            field_dict["output"] = output
        if seq is not UNSET:
            field_dict["seq"] = seq
        if started is not UNSET:
            field_dict["started"] = started

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.agent_completed import AgentCompleted  # noqa: PLC0415
        from ..models.agent_file_change import AgentFileChange  # noqa: PLC0415
        from ..models.agent_output import AgentOutput  # noqa: PLC0415
        from ..models.agent_started import AgentStarted  # noqa: PLC0415

        d = dict(src_dict)
        _completed = d.pop("completed", UNSET)
        completed: AgentCompleted | Unset
        if isinstance(_completed, Unset):
            completed = UNSET
        else:
            completed = AgentCompleted.from_dict(_completed)

        _event_time = d.pop("eventTime", UNSET)
        event_time: datetime.datetime | Unset
        if isinstance(_event_time, Unset):
            event_time = UNSET
        else:
            event_time = datetime.datetime.fromisoformat(_event_time)

        _file_change = d.pop("fileChange", UNSET)
        file_change: AgentFileChange | Unset
        if isinstance(_file_change, Unset):
            file_change = UNSET
        else:
            file_change = AgentFileChange.from_dict(_file_change)

        _output = d.pop("output", UNSET)
        output: AgentOutput | Unset
        if isinstance(_output, Unset):
            output = UNSET
        else:
            output = AgentOutput.from_dict(_output)

        seq = d.pop("seq", UNSET)

        _started = d.pop("started", UNSET)
        started: AgentStarted | Unset
        if isinstance(_started, Unset):
            started = UNSET
        else:
            started = AgentStarted.from_dict(_started)

        run_agent_response = cls(
            completed=completed,
            event_time=event_time,
            file_change=file_change,
            output=output,
            seq=seq,
            started=started,
        )

        run_agent_response.additional_properties = d
        return run_agent_response

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
