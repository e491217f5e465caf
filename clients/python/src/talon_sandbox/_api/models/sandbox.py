from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.sandbox_isolation import SandboxIsolation
from ..models.sandbox_restart_policy import SandboxRestartPolicy
from ..models.sandbox_state import SandboxState
from ..models.sandbox_timeout_action import SandboxTimeoutAction
from ..models.sandbox_worker_loss_action import SandboxWorkerLossAction
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.network_policy import NetworkPolicy
    from ..models.resources import Resources
    from ..models.sandbox_env import SandboxEnv
    from ..models.sandbox_labels import SandboxLabels
    from ..models.sandbox_metadata import SandboxMetadata
    from ..models.volume_mount import VolumeMount


T = TypeVar("T", bound="Sandbox")


@_attrs_define
class Sandbox:
    """A sandbox. Fields marked output-only are set by the server; values sent
    by a client in them are ignored.

       Attributes:
           auto_resume (bool | Unset): When paused (idle, by its timeout or by a call), the next call that
                reaches it (process, PTY, file, code, browser, agent, preview)
                resumes it first and then runs. Without it, such a call answers
                FAILED_PRECONDITION saying the sandbox is paused. Set on create.
           create_time (datetime.datetime | Unset): Output only.
           env (SandboxEnv | Unset): Input only. Environment variables for every process. Never returned.
           expire_time (datetime.datetime | Unset): Output only. When the timeout passes.
           generation (str | Unset): Output only. Fencing counter, incremented on every placement.
           idle_timeout (str | Unset): Pause the sandbox (freeze it, releasing its cpu share for placement)
                once it has been idle this long: no call reaching it (process, PTY,
                file, code, browser, agent or preview), no process output, no PTY or
                stdin input and no preview traffic. Reads of its record (Get, List,
                metrics, events) are not activity. Unset or zero: never. At least
                the server's shortest idle timeout (10 s unless configured), at most
                its longest sandbox timeout; checked every 2 s on the worker, so it
                pauses within about 2 s after the idle time passes. Set on create.
           image (str | Unset): The image: "host" (the default) or an imported image's name.
           isolation (SandboxIsolation | Unset): How strongly it is kept from the host (set on create; unspecified is
                CONTAINER). A create that asks for a level no connected worker offers
                answers FAILED_PRECONDITION naming the level. Output: the level it
                runs at.
           labels (SandboxLabels | Unset): Free-form labels, filterable in ListSandboxes.
           metadata (SandboxMetadata | Unset): Free-form metadata for the caller's own bookkeeping (a user id, a
                session, a run), filterable in ListSandboxes. Unlike labels, values may
                hold any text: at most 64 entries, keys 1 to 256 bytes, values at most
                4096 bytes, 32 KiB in all, no control characters.
           network_policy (NetworkPolicy | Unset): What a sandbox may reach on the network.
           owner_id (str | Unset): Output only. The user or API key that created it.
           resources (Resources | Unset): Compute resources of one sandbox. Zero means "the server's default".
           restart_policy (SandboxRestartPolicy | Unset): What happens when its host restarts (set on create; unspecified
               is
                ALWAYS). Output: the policy it has.
           sandbox_id (str | Unset): Output only. "sbx_" followed by 26 lowercase base32 characters.
           secret_names (list[str] | Unset): Names of tenant secrets to inject as environment variables.
           snapshot_id (str | Unset): Create it from this snapshot of the caller's tenant (CreateSnapshot):
                it starts with the snapshot's files, on the image the snapshot was
                taken from (leave `image` empty). Output: the snapshot it came from.
           state (SandboxState | Unset): Output only. The lifecycle state.
           state_message (str | Unset): Output only. Why the sandbox is in its state, e.g. a failure reason.
           tenant_id (str | Unset): Output only. The owning tenant.
           timeout (str | Unset): How long the sandbox may live after it starts; the server's default
                when unset.
           timeout_action (SandboxTimeoutAction | Unset): What happens when the timeout passes; PAUSE when unset.
           update_time (datetime.datetime | Unset): Output only.
           volume_mounts (list[VolumeMount] | Unset): Volumes mounted in it (set on create; VolumeService). Needs a worker
                on the `shared` workspace backend; a volume another sandbox mounts
                answers FAILED_PRECONDITION. At most 8.
           worker_id (str | Unset): Output only. The worker it is placed on.
           worker_loss_action (SandboxWorkerLossAction | Unset): What happens when its worker is lost and its workspace
               cannot move
                with it (set on create; unspecified takes the platform's default).
                Output: the action it has.
    """

    auto_resume: bool | Unset = UNSET
    create_time: datetime.datetime | Unset = UNSET
    env: SandboxEnv | Unset = UNSET
    expire_time: datetime.datetime | Unset = UNSET
    generation: str | Unset = UNSET
    idle_timeout: str | Unset = UNSET
    image: str | Unset = UNSET
    isolation: SandboxIsolation | Unset = UNSET
    labels: SandboxLabels | Unset = UNSET
    metadata: SandboxMetadata | Unset = UNSET
    network_policy: NetworkPolicy | Unset = UNSET
    owner_id: str | Unset = UNSET
    resources: Resources | Unset = UNSET
    restart_policy: SandboxRestartPolicy | Unset = UNSET
    sandbox_id: str | Unset = UNSET
    secret_names: list[str] | Unset = UNSET
    snapshot_id: str | Unset = UNSET
    state: SandboxState | Unset = UNSET
    state_message: str | Unset = UNSET
    tenant_id: str | Unset = UNSET
    timeout: str | Unset = UNSET
    timeout_action: SandboxTimeoutAction | Unset = UNSET
    update_time: datetime.datetime | Unset = UNSET
    volume_mounts: list[VolumeMount] | Unset = UNSET
    worker_id: str | Unset = UNSET
    worker_loss_action: SandboxWorkerLossAction | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        auto_resume = self.auto_resume

        create_time: str | Unset = UNSET
        if not isinstance(self.create_time, Unset):
            create_time = self.create_time.isoformat()

        env: dict[str, Any] | Unset = UNSET
        if not isinstance(self.env, Unset):
            env = self.env.to_dict()

        expire_time: str | Unset = UNSET
        if not isinstance(self.expire_time, Unset):
            expire_time = self.expire_time.isoformat()

        generation = self.generation

        idle_timeout = self.idle_timeout

        image = self.image

        isolation: str | Unset = UNSET
        if not isinstance(self.isolation, Unset):
            isolation = self.isolation.value

        labels: dict[str, Any] | Unset = UNSET
        if not isinstance(self.labels, Unset):
            labels = self.labels.to_dict()

        metadata: dict[str, Any] | Unset = UNSET
        if not isinstance(self.metadata, Unset):
            metadata = self.metadata.to_dict()

        network_policy: dict[str, Any] | Unset = UNSET
        if not isinstance(self.network_policy, Unset):
            network_policy = self.network_policy.to_dict()

        owner_id = self.owner_id

        resources: dict[str, Any] | Unset = UNSET
        if not isinstance(self.resources, Unset):
            resources = self.resources.to_dict()

        restart_policy: str | Unset = UNSET
        if not isinstance(self.restart_policy, Unset):
            restart_policy = self.restart_policy.value

        sandbox_id = self.sandbox_id

        secret_names: list[str] | Unset = UNSET
        if not isinstance(self.secret_names, Unset):
            secret_names = self.secret_names

        snapshot_id = self.snapshot_id

        state: str | Unset = UNSET
        if not isinstance(self.state, Unset):
            state = self.state.value

        state_message = self.state_message

        tenant_id = self.tenant_id

        timeout = self.timeout

        timeout_action: str | Unset = UNSET
        if not isinstance(self.timeout_action, Unset):
            timeout_action = self.timeout_action.value

        update_time: str | Unset = UNSET
        if not isinstance(self.update_time, Unset):
            update_time = self.update_time.isoformat()

        volume_mounts: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.volume_mounts, Unset):
            volume_mounts = []
            for volume_mounts_item_data in self.volume_mounts:
                volume_mounts_item = volume_mounts_item_data.to_dict()
                volume_mounts.append(volume_mounts_item)

        worker_id = self.worker_id

        worker_loss_action: str | Unset = UNSET
        if not isinstance(self.worker_loss_action, Unset):
            worker_loss_action = self.worker_loss_action.value

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if auto_resume is not UNSET:
            field_dict["autoResume"] = auto_resume
        if create_time is not UNSET:
            field_dict["createTime"] = create_time
        if env is not UNSET:
            field_dict["env"] = env
        if expire_time is not UNSET:
            field_dict["expireTime"] = expire_time
        if generation is not UNSET:
            field_dict["generation"] = generation
        if idle_timeout is not UNSET:
            field_dict["idleTimeout"] = idle_timeout
        if image is not UNSET:
            field_dict["image"] = image
        if isolation is not UNSET:
            field_dict["isolation"] = isolation
        if labels is not UNSET:
            field_dict["labels"] = labels
        if metadata is not UNSET:
            field_dict["metadata"] = metadata
        if network_policy is not UNSET:
            field_dict["networkPolicy"] = network_policy
        if owner_id is not UNSET:
            field_dict["ownerId"] = owner_id
        if resources is not UNSET:
            field_dict["resources"] = resources
        if restart_policy is not UNSET:
            field_dict["restartPolicy"] = restart_policy
        if sandbox_id is not UNSET:
            field_dict["sandboxId"] = sandbox_id
        if secret_names is not UNSET:
            field_dict["secretNames"] = secret_names
        if snapshot_id is not UNSET:
            field_dict["snapshotId"] = snapshot_id
        if state is not UNSET:
            field_dict["state"] = state
        if state_message is not UNSET:
            field_dict["stateMessage"] = state_message
        if tenant_id is not UNSET:
            field_dict["tenantId"] = tenant_id
        if timeout is not UNSET:
            field_dict["timeout"] = timeout
        if timeout_action is not UNSET:
            field_dict["timeoutAction"] = timeout_action
        if update_time is not UNSET:
            field_dict["updateTime"] = update_time
        if volume_mounts is not UNSET:
            field_dict["volumeMounts"] = volume_mounts
        if worker_id is not UNSET:
            field_dict["workerId"] = worker_id
        if worker_loss_action is not UNSET:
            field_dict["workerLossAction"] = worker_loss_action

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.network_policy import NetworkPolicy  # noqa: PLC0415
        from ..models.resources import Resources  # noqa: PLC0415
        from ..models.sandbox_env import SandboxEnv  # noqa: PLC0415
        from ..models.sandbox_labels import SandboxLabels  # noqa: PLC0415
        from ..models.sandbox_metadata import SandboxMetadata  # noqa: PLC0415
        from ..models.volume_mount import VolumeMount  # noqa: PLC0415

        d = dict(src_dict)
        auto_resume = d.pop("autoResume", UNSET)

        _create_time = d.pop("createTime", UNSET)
        create_time: datetime.datetime | Unset
        if isinstance(_create_time, Unset):
            create_time = UNSET
        else:
            create_time = datetime.datetime.fromisoformat(_create_time)

        _env = d.pop("env", UNSET)
        env: SandboxEnv | Unset
        if isinstance(_env, Unset):
            env = UNSET
        else:
            env = SandboxEnv.from_dict(_env)

        _expire_time = d.pop("expireTime", UNSET)
        expire_time: datetime.datetime | Unset
        if isinstance(_expire_time, Unset):
            expire_time = UNSET
        else:
            expire_time = datetime.datetime.fromisoformat(_expire_time)

        generation = d.pop("generation", UNSET)

        idle_timeout = d.pop("idleTimeout", UNSET)

        image = d.pop("image", UNSET)

        _isolation = d.pop("isolation", UNSET)
        isolation: SandboxIsolation | Unset
        if isinstance(_isolation, Unset):
            isolation = UNSET
        else:
            isolation = SandboxIsolation(_isolation)

        _labels = d.pop("labels", UNSET)
        labels: SandboxLabels | Unset
        if isinstance(_labels, Unset):
            labels = UNSET
        else:
            labels = SandboxLabels.from_dict(_labels)

        _metadata = d.pop("metadata", UNSET)
        metadata: SandboxMetadata | Unset
        if isinstance(_metadata, Unset):
            metadata = UNSET
        else:
            metadata = SandboxMetadata.from_dict(_metadata)

        _network_policy = d.pop("networkPolicy", UNSET)
        network_policy: NetworkPolicy | Unset
        if isinstance(_network_policy, Unset):
            network_policy = UNSET
        else:
            network_policy = NetworkPolicy.from_dict(_network_policy)

        owner_id = d.pop("ownerId", UNSET)

        _resources = d.pop("resources", UNSET)
        resources: Resources | Unset
        if isinstance(_resources, Unset):
            resources = UNSET
        else:
            resources = Resources.from_dict(_resources)

        _restart_policy = d.pop("restartPolicy", UNSET)
        restart_policy: SandboxRestartPolicy | Unset
        if isinstance(_restart_policy, Unset):
            restart_policy = UNSET
        else:
            restart_policy = SandboxRestartPolicy(_restart_policy)

        sandbox_id = d.pop("sandboxId", UNSET)

        secret_names = cast(list[str], d.pop("secretNames", UNSET))

        snapshot_id = d.pop("snapshotId", UNSET)

        _state = d.pop("state", UNSET)
        state: SandboxState | Unset
        if isinstance(_state, Unset):
            state = UNSET
        else:
            state = SandboxState(_state)

        state_message = d.pop("stateMessage", UNSET)

        tenant_id = d.pop("tenantId", UNSET)

        timeout = d.pop("timeout", UNSET)

        _timeout_action = d.pop("timeoutAction", UNSET)
        timeout_action: SandboxTimeoutAction | Unset
        if isinstance(_timeout_action, Unset):
            timeout_action = UNSET
        else:
            timeout_action = SandboxTimeoutAction(_timeout_action)

        _update_time = d.pop("updateTime", UNSET)
        update_time: datetime.datetime | Unset
        if isinstance(_update_time, Unset):
            update_time = UNSET
        else:
            update_time = datetime.datetime.fromisoformat(_update_time)

        _volume_mounts = d.pop("volumeMounts", UNSET)
        volume_mounts: list[VolumeMount] | Unset = UNSET
        if _volume_mounts is not UNSET:
            volume_mounts = []
            for volume_mounts_item_data in _volume_mounts:
                volume_mounts_item = VolumeMount.from_dict(volume_mounts_item_data)

                volume_mounts.append(volume_mounts_item)

        worker_id = d.pop("workerId", UNSET)

        _worker_loss_action = d.pop("workerLossAction", UNSET)
        worker_loss_action: SandboxWorkerLossAction | Unset
        if isinstance(_worker_loss_action, Unset):
            worker_loss_action = UNSET
        else:
            worker_loss_action = SandboxWorkerLossAction(_worker_loss_action)

        sandbox = cls(
            auto_resume=auto_resume,
            create_time=create_time,
            env=env,
            expire_time=expire_time,
            generation=generation,
            idle_timeout=idle_timeout,
            image=image,
            isolation=isolation,
            labels=labels,
            metadata=metadata,
            network_policy=network_policy,
            owner_id=owner_id,
            resources=resources,
            restart_policy=restart_policy,
            sandbox_id=sandbox_id,
            secret_names=secret_names,
            snapshot_id=snapshot_id,
            state=state,
            state_message=state_message,
            tenant_id=tenant_id,
            timeout=timeout,
            timeout_action=timeout_action,
            update_time=update_time,
            volume_mounts=volume_mounts,
            worker_id=worker_id,
            worker_loss_action=worker_loss_action,
        )

        sandbox.additional_properties = d
        return sandbox

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
