from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.code_completed import CodeCompleted
    from ..models.code_error import CodeError
    from ..models.code_output import CodeOutput
    from ..models.code_result import CodeResult


T = TypeVar("T", bound="RunCodeResponse")


@_attrs_define
class RunCodeResponse:
    """One event of a run.

    Attributes:
        code_error (CodeError | Unset): An error raised by the code.
        completed (CodeCompleted | Unset): The end of a run.
        result (CodeResult | Unset): A rich result, by MIME type: `text/plain` always when the kernel gives
             one; `image/png` and other binary types base64-encoded, as Jupyter sends
             them; `application/json` as JSON text.
        stderr (CodeOutput | Unset): Output text.
        stdout (CodeOutput | Unset): Output text.
    """

    code_error: CodeError | Unset = UNSET
    completed: CodeCompleted | Unset = UNSET
    result: CodeResult | Unset = UNSET
    stderr: CodeOutput | Unset = UNSET
    stdout: CodeOutput | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        code_error: dict[str, Any] | Unset = UNSET
        if not isinstance(self.code_error, Unset):
            code_error = self.code_error.to_dict()

        completed: dict[str, Any] | Unset = UNSET
        if not isinstance(self.completed, Unset):
            completed = self.completed.to_dict()

        result: dict[str, Any] | Unset = UNSET
        if not isinstance(self.result, Unset):
            result = self.result.to_dict()

        stderr: dict[str, Any] | Unset = UNSET
        if not isinstance(self.stderr, Unset):
            stderr = self.stderr.to_dict()

        stdout: dict[str, Any] | Unset = UNSET
        if not isinstance(self.stdout, Unset):
            stdout = self.stdout.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if code_error is not UNSET:
            field_dict["codeError"] = code_error
        if completed is not UNSET:
            field_dict["completed"] = completed
        if result is not UNSET:
            field_dict["result"] = result
        if stderr is not UNSET:
            field_dict["stderr"] = stderr
        if stdout is not UNSET:
            field_dict["stdout"] = stdout

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.code_completed import CodeCompleted  # noqa: PLC0415
        from ..models.code_error import CodeError  # noqa: PLC0415
        from ..models.code_output import CodeOutput  # noqa: PLC0415
        from ..models.code_result import CodeResult  # noqa: PLC0415

        d = dict(src_dict)
        _code_error = d.pop("codeError", UNSET)
        code_error: CodeError | Unset
        if isinstance(_code_error, Unset):
            code_error = UNSET
        else:
            code_error = CodeError.from_dict(_code_error)

        _completed = d.pop("completed", UNSET)
        completed: CodeCompleted | Unset
        if isinstance(_completed, Unset):
            completed = UNSET
        else:
            completed = CodeCompleted.from_dict(_completed)

        _result = d.pop("result", UNSET)
        result: CodeResult | Unset
        if isinstance(_result, Unset):
            result = UNSET
        else:
            result = CodeResult.from_dict(_result)

        _stderr = d.pop("stderr", UNSET)
        stderr: CodeOutput | Unset
        if isinstance(_stderr, Unset):
            stderr = UNSET
        else:
            stderr = CodeOutput.from_dict(_stderr)

        _stdout = d.pop("stdout", UNSET)
        stdout: CodeOutput | Unset
        if isinstance(_stdout, Unset):
            stdout = UNSET
        else:
            stdout = CodeOutput.from_dict(_stdout)

        run_code_response = cls(
            code_error=code_error,
            completed=completed,
            result=result,
            stderr=stderr,
            stdout=stdout,
        )

        run_code_response.additional_properties = d
        return run_code_response

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
