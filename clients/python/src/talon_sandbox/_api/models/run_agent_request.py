from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.run_agent_request_env import RunAgentRequestEnv


T = TypeVar("T", bound="RunAgentRequest")


@_attrs_define
class RunAgentRequest:
    """Request for RunAgent.

    Attributes:
        command (list[str] | Unset): argv of the agent program.
        cwd (str | Unset): Working directory.
        env (RunAgentRequestEnv | Unset): Extra environment.
        prompt (str | Unset): The task, written to the agent's stdin.
        sandbox_id (str | Unset): The sandbox.
        secret_names (list[str] | Unset): Names of tenant secrets given to the agent as environment variables
             (the name is the variable). Their values appear in no event, log or
             audit record: output that contains one has it replaced by `***`.
        timeout (str | Unset): Stop the task after this long; 30 minutes when unset.
        user (str | Unset): The user it runs as; the sandbox's default when empty.
    """

    command: list[str] | Unset = UNSET
    cwd: str | Unset = UNSET
    env: RunAgentRequestEnv | Unset = UNSET
    prompt: str | Unset = UNSET
    sandbox_id: str | Unset = UNSET
    secret_names: list[str] | Unset = UNSET
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

        prompt = self.prompt

        sandbox_id = self.sandbox_id

        secret_names: list[str] | Unset = UNSET
        if not isinstance(self.secret_names, Unset):
            secret_names = self.secret_names

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
        if prompt is not UNSET:
            field_dict["prompt"] = prompt
        if sandbox_id is not UNSET:
            field_dict["sandboxId"] = sandbox_id
        if secret_names is not UNSET:
            field_dict["secretNames"] = secret_names
        if timeout is not UNSET:
            field_dict["timeout"] = timeout
        if user is not UNSET:
            field_dict["user"] = user

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.run_agent_request_env import RunAgentRequestEnv  # noqa: PLC0415

        d = dict(src_dict)
        command = cast(list[str], d.pop("command", UNSET))

        cwd = d.pop("cwd", UNSET)

        _env = d.pop("env", UNSET)
        env: RunAgentRequestEnv | Unset
        if isinstance(_env, Unset):
            env = UNSET
        else:
            env = RunAgentRequestEnv.from_dict(_env)

        prompt = d.pop("prompt", UNSET)

        sandbox_id = d.pop("sandboxId", UNSET)

        secret_names = cast(list[str], d.pop("secretNames", UNSET))

        timeout = d.pop("timeout", UNSET)

        user = d.pop("user", UNSET)

        run_agent_request = cls(
            command=command,
            cwd=cwd,
            env=env,
            prompt=prompt,
            sandbox_id=sandbox_id,
            secret_names=secret_names,
            timeout=timeout,
            user=user,
        )

        run_agent_request.additional_properties = d
        return run_agent_request

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
