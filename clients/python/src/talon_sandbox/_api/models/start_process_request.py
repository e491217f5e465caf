from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.pty_size import PtySize
    from ..models.start_process_request_env import StartProcessRequestEnv


T = TypeVar("T", bound="StartProcessRequest")


@_attrs_define
class StartProcessRequest:
    """Request for StartProcess.

    Attributes:
        command (list[str] | Unset): argv; argv[0] is looked up in PATH.
        cwd (str | Unset): Working directory; /workspace when empty.
        env (StartProcessRequestEnv | Unset): Extra environment, over the sandbox's.
        pty (PtySize | Unset): Size of a pseudo-terminal.
        sandbox_id (str | Unset): The sandbox.
        stdin (bool | Unset): Keep stdin open for SendProcessInput.
        tag (str | Unset): A name to reattach by; unique among the sandbox's running processes.
        timeout (str | Unset): Kill the process after this long; no limit when unset.
        user (str | Unset): User name or uid inside the sandbox; the image's default when empty.
    """

    command: list[str] | Unset = UNSET
    cwd: str | Unset = UNSET
    env: StartProcessRequestEnv | Unset = UNSET
    pty: PtySize | Unset = UNSET
    sandbox_id: str | Unset = UNSET
    stdin: bool | Unset = UNSET
    tag: str | Unset = UNSET
    timeout: str | Unset = UNSET
    user: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        command: list[str] | Unset = UNSET
        if not isinstance(self.command, Unset):
            command = self.command

        cwd = self.cwd

        env: dict[str, Any] | Unset = UNSET
        if not isinstance(self.env, Unset):
            env = self.env.to_dict()

        pty: dict[str, Any] | Unset = UNSET
        if not isinstance(self.pty, Unset):
            pty = self.pty.to_dict()

        sandbox_id = self.sandbox_id

        stdin = self.stdin

        tag = self.tag

        timeout = self.timeout

        user = self.user

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if command is not UNSET:
            field_dict["command"] = command
        if cwd is not UNSET:
            field_dict["cwd"] = cwd
        if env is not UNSET:
            field_dict["env"] = env
        if pty is not UNSET:
            field_dict["pty"] = pty
        if sandbox_id is not UNSET:
            field_dict["sandboxId"] = sandbox_id
        if stdin is not UNSET:
            field_dict["stdin"] = stdin
        if tag is not UNSET:
            field_dict["tag"] = tag
        if timeout is not UNSET:
            field_dict["timeout"] = timeout
        if user is not UNSET:
            field_dict["user"] = user

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.pty_size import PtySize  # noqa: PLC0415
        from ..models.start_process_request_env import (
            StartProcessRequestEnv,  # noqa: PLC0415
        )

        d = dict(src_dict)
        command = cast(list[str], d.pop("command", UNSET))

        cwd = d.pop("cwd", UNSET)

        _env = d.pop("env", UNSET)
        env: StartProcessRequestEnv | Unset
        if isinstance(_env, Unset):
            env = UNSET
        else:
            env = StartProcessRequestEnv.from_dict(_env)

        _pty = d.pop("pty", UNSET)
        pty: PtySize | Unset
        if isinstance(_pty, Unset):
            pty = UNSET
        else:
            pty = PtySize.from_dict(_pty)

        sandbox_id = d.pop("sandboxId", UNSET)

        stdin = d.pop("stdin", UNSET)

        tag = d.pop("tag", UNSET)

        timeout = d.pop("timeout", UNSET)

        user = d.pop("user", UNSET)

        start_process_request = cls(
            command=command,
            cwd=cwd,
            env=env,
            pty=pty,
            sandbox_id=sandbox_id,
            stdin=stdin,
            tag=tag,
            timeout=timeout,
            user=user,
        )

        start_process_request.additional_properties = d
        return start_process_request

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
