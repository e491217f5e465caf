from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.agent_output_stream import AgentOutputStream
from ..types import UNSET, Unset

T = TypeVar("T", bound="AgentOutput")


@_attrs_define
class AgentOutput:
    """A line of the agent's output.

    Attributes:
        stream (AgentOutputStream | Unset): Which stream.
        text (str | Unset): The text.
    """

    stream: AgentOutputStream | Unset = UNSET
    text: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        stream: str | Unset = UNSET
        if not isinstance(self.stream, Unset):
            stream = self.stream.value

        text = self.text

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if stream is not UNSET:
            field_dict["stream"] = stream
        if text is not UNSET:
            field_dict["text"] = text

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        _stream = d.pop("stream", UNSET)
        stream: AgentOutputStream | Unset
        if isinstance(_stream, Unset):
            stream = UNSET
        else:
            stream = AgentOutputStream(_stream)

        text = d.pop("text", UNSET)

        agent_output = cls(
            stream=stream,
            text=text,
        )

        agent_output.additional_properties = d
        return agent_output

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
