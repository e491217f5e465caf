//! Conversions between API (prost) types and domain/storage types. The only
//! place that knows both.

use crate::auth::Role;
use crate::db::entity::{api_key, audit_event, sandbox, tenant, user, worker};
use crate::domain::fencing::FenceScope;
use crate::domain::isolation::Isolation;
use crate::domain::policy::{EgressPolicy, PolicyParts};
use crate::domain::sandboxes::{
    RestartPolicy, TimeoutAction, WorkerLoss, labels_of, metadata_of, policy_of, restart_policy_of,
    state_of, timeout_action_of, worker_loss_of,
};
use crate::domain::state::SandboxState;
use crate::domain::tenants::Usage;
use crate::error::{Error, Result};
use prost::Message;
use talon_proto::v1 as pb;

pub use talon_core::time::{ms_to_timestamp as ts, timestamp_to_ms as ms_of};

pub fn duration(d: &prost_types::Duration) -> Result<std::time::Duration> {
    if d.seconds < 0 || d.nanos < 0 {
        return Err(Error::InvalidArgument(
            "durations must not be negative".into(),
        ));
    }
    Ok(std::time::Duration::new(d.seconds as u64, d.nanos as u32))
}

pub fn state_to_pb(s: SandboxState) -> pb::SandboxState {
    match s {
        SandboxState::Pending => pb::SandboxState::Pending,
        SandboxState::Starting => pb::SandboxState::Starting,
        SandboxState::Running => pb::SandboxState::Running,
        SandboxState::Paused => pb::SandboxState::Paused,
        SandboxState::Stopping => pb::SandboxState::Stopping,
        SandboxState::Stopped => pb::SandboxState::Stopped,
        SandboxState::Failed => pb::SandboxState::Failed,
        SandboxState::Deleted => pb::SandboxState::Deleted,
    }
}

pub fn state_from_pb(v: i32) -> Option<SandboxState> {
    Some(match pb::SandboxState::try_from(v).ok()? {
        pb::SandboxState::Unspecified => return None,
        pb::SandboxState::Pending => SandboxState::Pending,
        pb::SandboxState::Starting => SandboxState::Starting,
        pb::SandboxState::Running => SandboxState::Running,
        pb::SandboxState::Paused => SandboxState::Paused,
        pb::SandboxState::Stopping => SandboxState::Stopping,
        pb::SandboxState::Stopped => SandboxState::Stopped,
        pb::SandboxState::Failed => SandboxState::Failed,
        pb::SandboxState::Deleted => SandboxState::Deleted,
    })
}

pub fn policy_to_pb(p: &EgressPolicy) -> pb::NetworkPolicy {
    let parts = PolicyParts::from(p);
    pb::NetworkPolicy {
        mode: parts.mode,
        allow_cidrs: parts.cidrs,
        allow_domains: parts.domains,
    }
}

/// Validated (see `EgressPolicy::try_from`): an unknown mode is refused.
pub fn policy_from_pb(p: &pb::NetworkPolicy) -> Result<EgressPolicy> {
    Ok(EgressPolicy::try_from(PolicyParts {
        mode: p.mode,
        cidrs: p.allow_cidrs.clone(),
        domains: p.allow_domains.clone(),
    })?)
}

pub fn role_to_pb(r: Role) -> pb::Role {
    match r {
        Role::Owner => pb::Role::Owner,
        Role::Developer => pb::Role::Developer,
        Role::Viewer => pb::Role::Viewer,
    }
}

/// None for ROLE_UNSPECIFIED; an error for unknown numbers.
pub fn role_from_pb(v: i32) -> Result<Option<Role>> {
    match pb::Role::try_from(v).map_err(|_| Error::InvalidArgument(format!("unknown role {v}")))? {
        pb::Role::Unspecified => Ok(None),
        pb::Role::Owner => Ok(Some(Role::Owner)),
        pb::Role::Developer => Ok(Some(Role::Developer)),
        pb::Role::Viewer => Ok(Some(Role::Viewer)),
    }
}

fn role_of(s: &str) -> pb::Role {
    s.parse::<Role>()
        .map(role_to_pb)
        .unwrap_or(pb::Role::Unspecified)
}

/// A snapshot as the contract says it.
pub fn snapshot_to_pb(m: &crate::db::entity::snapshot::Model) -> pb::Snapshot {
    pb::Snapshot {
        snapshot_id: m.id.clone(),
        name: m.name.clone(),
        sandbox_id: m.sandbox_id.clone(),
        image: m.image.clone(),
        size_bytes: m.size_bytes,
        create_time: Some(ts(m.created_at)),
        frozen: Some(prost_types::Duration {
            seconds: m.frozen_ms / 1000,
            nanos: ((m.frozen_ms % 1000) * 1_000_000) as i32,
        }),
        memory: false,
    }
}

/// A sandbox as the contract says it. A stored field that doesn't read is
/// an error (INTERNAL, naming the sandbox), never shown as a default.
pub fn sandbox_to_pb(m: &sandbox::Model) -> Result<pb::Sandbox> {
    let labels = labels_of(m)?;
    let secret_names: Vec<String> = serde_json::from_str(&m.secret_names)
        .map_err(|_| Error::Internal(format!("sandbox {}: its secret names do not read", m.id)))?;
    Ok(pb::Sandbox {
        sandbox_id: m.id.clone(),
        tenant_id: m.tenant_id.clone(),
        owner_id: m.owner_id.clone(),
        image: m.image.clone(),
        state: state_to_pb(state_of(m)?) as i32,
        state_message: m.state_message.clone(),
        generation: m.generation,
        worker_id: m.worker_id.clone().unwrap_or_default(),
        resources: Some(pb::Resources {
            cpu_millis: m.cpu_millis,
            memory_mib: m.memory_mib,
            disk_mib: m.disk_mib,
            max_pids: m.max_pids,
        }),
        labels: labels.into_iter().collect(),
        env: Default::default(),
        secret_names,
        network_policy: Some(policy_to_pb(&policy_of(m)?)),
        timeout: Some(prost_types::Duration {
            seconds: m.timeout_ms / 1000,
            nanos: ((m.timeout_ms % 1000) * 1_000_000) as i32,
        }),
        timeout_action: match timeout_action_of(m)? {
            TimeoutAction::Pause => pb::TimeoutAction::Pause as i32,
            TimeoutAction::Delete => pb::TimeoutAction::Delete as i32,
        },
        create_time: Some(ts(m.created_at)),
        update_time: Some(ts(m.updated_at)),
        expire_time: m.expires_at.map(ts),
        metadata: metadata_of(m)?.into_iter().collect(),
        volume_mounts: crate::domain::volumes::mounts_of(m)?
            .into_iter()
            .map(|v| pb::VolumeMount {
                name: v.name,
                path: v.path,
                read_only: v.read_only,
            })
            .collect(),
        idle_timeout: (m.idle_timeout_ms > 0).then(|| prost_types::Duration {
            seconds: m.idle_timeout_ms / 1000,
            nanos: ((m.idle_timeout_ms % 1000) * 1_000_000) as i32,
        }),
        auto_resume: m.auto_resume,
        snapshot_id: m.snapshot_id.clone(),
        isolation: Isolation::parse(&m.isolation)?.to_proto() as i32,
        restart_policy: match restart_policy_of(m)? {
            RestartPolicy::Always => pb::RestartPolicy::Always,
            RestartPolicy::Never => pb::RestartPolicy::Never,
        } as i32,
        worker_loss_action: match m.worker_loss.as_str() {
            "" => pb::WorkerLossAction::Unspecified,
            _ => match worker_loss_of(m, WorkerLoss::Wait)? {
                WorkerLoss::Wait => pb::WorkerLossAction::Wait,
                WorkerLoss::Move => pb::WorkerLossAction::Move,
            },
        } as i32,
    })
}

/// A sandbox as a platform admin sees it on its worker: the fields of
/// `sandbox_to_pb` placement needs, none of what it holds.
pub fn worker_sandbox_to_pb(m: &sandbox::Model) -> Result<pb::WorkerSandbox> {
    let s = sandbox_to_pb(m)?;
    Ok(pb::WorkerSandbox {
        sandbox_id: s.sandbox_id,
        tenant_id: s.tenant_id,
        state: s.state,
        image: s.image,
        isolation: s.isolation,
        resources: s.resources,
        generation: s.generation,
        worker_loss_action: s.worker_loss_action,
        create_time: s.create_time,
    })
}

/// One row of the failover history; a cause this release does not know
/// is an error, not UNSPECIFIED.
pub fn sandbox_move_to_pb(m: &crate::db::entity::sandbox_move::Model) -> Result<pb::SandboxMove> {
    use crate::domain::sandboxes::history::Cause;
    let cause = match Cause::parse(&m.cause)? {
        Cause::Reassigned => pb::SandboxMoveCause::Reassigned,
        Cause::WorkerLost => pb::SandboxMoveCause::WorkerLost,
        Cause::NotHeld => pb::SandboxMoveCause::NotHeld,
        Cause::Fenced => pb::SandboxMoveCause::Fenced,
    };
    Ok(pb::SandboxMove {
        sandbox_id: m.sandbox_id.clone(),
        tenant_id: m.tenant_id.clone(),
        from_worker_id: m.from_worker.clone(),
        to_worker_id: m.to_worker.clone(),
        cause: cause as i32,
        generation: m.generation,
        move_time: Some(ts(m.moved_at)),
        workspace_kept: m.workspace_kept,
    })
}

/// A requested restart policy: unspecified is ALWAYS; an unknown number
/// is INVALID_ARGUMENT.
pub fn restart_policy_from_pb(v: i32) -> Result<Option<RestartPolicy>> {
    match pb::RestartPolicy::try_from(v)
        .map_err(|_| Error::InvalidArgument(format!("unknown restart_policy {v}")))?
    {
        pb::RestartPolicy::Unspecified => Ok(None),
        pb::RestartPolicy::Always => Ok(Some(RestartPolicy::Always)),
        pb::RestartPolicy::Never => Ok(Some(RestartPolicy::Never)),
    }
}

/// A requested worker-loss action: unspecified takes the platform's
/// default; an unknown number is INVALID_ARGUMENT.
pub fn worker_loss_from_pb(v: i32) -> Result<Option<WorkerLoss>> {
    match pb::WorkerLossAction::try_from(v)
        .map_err(|_| Error::InvalidArgument(format!("unknown worker_loss_action {v}")))?
    {
        pb::WorkerLossAction::Unspecified => Ok(None),
        pb::WorkerLossAction::Wait => Ok(Some(WorkerLoss::Wait)),
        pb::WorkerLossAction::Move => Ok(Some(WorkerLoss::Move)),
    }
}

/// A requested level: unspecified is the default; MICROVM no worker
/// offers yet (FAILED_PRECONDITION); an unknown number is INVALID_ARGUMENT.
pub fn isolation_from_pb(v: i32) -> Result<Isolation> {
    match pb::Isolation::try_from(v)
        .map_err(|_| Error::InvalidArgument(format!("unknown isolation {v}")))?
    {
        pb::Isolation::Unspecified | pb::Isolation::Container => Ok(Isolation::Container),
        pb::Isolation::Gvisor => Ok(Isolation::Gvisor),
        pb::Isolation::Microvm => Err(Error::FailedPrecondition(
            "no worker offers microvm isolation yet; ask for container or gvisor".into(),
        )),
    }
}

pub fn timeout_action_from_pb(v: i32) -> Result<Option<TimeoutAction>> {
    match pb::TimeoutAction::try_from(v)
        .map_err(|_| Error::InvalidArgument("unknown timeout_action".into()))?
    {
        pb::TimeoutAction::Unspecified => Ok(None),
        pb::TimeoutAction::Pause => Ok(Some(TimeoutAction::Pause)),
        pb::TimeoutAction::Delete => Ok(Some(TimeoutAction::Delete)),
    }
}

/// The encoded `google.rpc.Status` details for a DEADLINE_EXCEEDED wait:
/// one `google.protobuf.Any` holding a `talon.v1.SandboxStateDetail`.
pub fn state_detail(m: &sandbox::Model) -> Vec<u8> {
    let detail = pb::SandboxStateDetail {
        // The detail is best effort: the error it rides on is the news.
        sandbox: sandbox_to_pb(m).ok(),
    };
    let any = talon_core::rpc_status::any("talon.v1.SandboxStateDetail", detail.encode_to_vec());
    talon_core::rpc_status::RpcStatus {
        code: tonic::Code::DeadlineExceeded as i32,
        message: String::new(),
        details: vec![any],
    }
    .encode_to_vec()
}

pub fn tenant_to_pb(t: &tenant::Model, u: Option<&Usage>) -> pb::Tenant {
    pb::Tenant {
        tenant_id: t.id.clone(),
        name: t.name.clone(),
        quota: Some(pb::Quota {
            max_sandboxes: t.max_sandboxes,
            max_cpu_millis: t.max_cpu_millis,
            max_memory_mib: t.max_memory_mib,
        }),
        usage: u.map(|u| pb::Usage {
            sandboxes: u.sandboxes,
            cpu_millis: u.cpu_millis,
            memory_mib: u.memory_mib,
        }),
        platform: t.platform,
        create_time: Some(ts(t.created_at)),
    }
}

pub fn quota_from_pb(q: &pb::Quota) -> crate::config::Quota {
    crate::config::Quota {
        max_sandboxes: q.max_sandboxes,
        max_cpu_millis: q.max_cpu_millis,
        max_memory_mib: q.max_memory_mib,
    }
}

pub fn user_to_pb(u: &user::Model) -> pb::User {
    pb::User {
        user_id: u.id.clone(),
        tenant_id: u.tenant_id.clone(),
        email: u.email.clone(),
        role: role_of(&u.role) as i32,
        disabled: u.disabled,
        create_time: Some(ts(u.created_at)),
    }
}

pub fn api_key_to_pb(k: &api_key::Model) -> pb::ApiKey {
    pb::ApiKey {
        api_key_id: k.id.clone(),
        tenant_id: k.tenant_id.clone(),
        user_id: k.user_id.clone(),
        name: k.name.clone(),
        prefix: k.prefix.clone(),
        role: role_of(&k.role) as i32,
        create_time: Some(ts(k.created_at)),
        expire_time: k.expires_at.map(ts),
        last_use_time: k.last_used_at.map(ts),
    }
}

pub fn audit_to_pb(a: &audit_event::Model) -> pb::AuditEvent {
    pb::AuditEvent {
        audit_event_id: a.id,
        event_time: Some(ts(a.created_at)),
        tenant_id: a.tenant_id.clone(),
        actor_id: a.actor_id.clone(),
        method: a.method.clone(),
        resource_id: a.resource_id.clone(),
        outcome: a.outcome.clone(),
        request_id: a.request_id.clone(),
    }
}

pub fn worker_to_pb(
    w: &worker::Model,
    connected: bool,
    allocated: pb::WorkerCapacity,
) -> pb::Worker {
    let state = match (connected, w.draining) {
        _ if w.lost_at > 0 => pb::WorkerState::Lost,
        (false, _) => pb::WorkerState::Offline,
        (true, true) => pb::WorkerState::Draining,
        (true, false) => pb::WorkerState::Active,
    };
    pb::Worker {
        worker_id: w.id.clone(),
        hostname: w.hostname.clone(),
        state: state as i32,
        capacity: Some(pb::WorkerCapacity {
            cpu_millis: w.cpu_millis,
            memory_mib: w.memory_mib,
            sandboxes: w.max_sandboxes,
        }),
        allocated: Some(allocated),
        runtimes: w
            .runtimes
            .split(',')
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect(),
        version: w.version.clone(),
        last_heartbeat_time: Some(ts(w.last_heartbeat_at)),
        register_time: Some(ts(w.registered_at)),
        lease_expire_time: (w.lease_expires_at > 0).then(|| ts(w.lease_expires_at)),
        last_lost_time: (w.last_lost_at > 0).then(|| ts(w.last_lost_at)),
        workspace_backend: w.workspace_backend.clone(),
        failover_scope: match FenceScope::from_number(w.fence_scope) {
            FenceScope::None => pb::FailoverScope::None,
            FenceScope::Movable => pb::FailoverScope::Movable,
            FenceScope::Shared => pb::FailoverScope::Shared,
        } as i32,
    }
}

/// A link's `ttl`, in whole seconds rounded up, read by the one duration
/// parser (`duration`: negative is refused); its range is the link's
/// (`domain::preview::ttl_within`: 1 s to the link's most).
pub fn ttl_secs(
    d: Option<prost_types::Duration>,
) -> std::result::Result<Option<u64>, tonic::Status> {
    Ok(d.as_ref()
        .map(duration)
        .transpose()?
        .map(|t| t.as_secs() + u64::from(t.subsec_nanos() > 0)))
}

/// A domain error as the gRPC status a caller sees: here, in the transport
/// layer, so that the domain's error never reaches up into `api`.
impl From<Error> for tonic::Status {
    fn from(e: Error) -> Self {
        match e {
            Error::Db(err) => {
                // Never leak SQL to callers; the log has it.
                tracing::error!(error = %err, "database error");
                tonic::Status::internal("internal error")
            }
            Error::Internal(msg) => {
                tracing::error!(error = %msg, "internal error");
                tonic::Status::internal("internal error")
            }
            Error::DeadlineExceeded { message, sandbox } => tonic::Status::with_details(
                tonic::Code::DeadlineExceeded,
                message,
                state_detail(&sandbox).into(),
            ),
            other => tonic::Status::new(other.code(), other.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ttl_is_read_by_the_one_parser_and_rounded_up() {
        let d = |seconds, nanos| Some(prost_types::Duration { seconds, nanos });
        assert_eq!(ttl_secs(None).unwrap(), None);
        assert_eq!(ttl_secs(d(60, 0)).unwrap(), Some(60));
        assert_eq!(ttl_secs(d(60, 1)).unwrap(), Some(61));
        assert_eq!(
            ttl_secs(d(0, 0)).unwrap(),
            Some(0),
            "its range is the link's"
        );
        for bad in [d(-1, 0), d(0, -1)] {
            let e = ttl_secs(bad).unwrap_err();
            assert_eq!(e.code(), tonic::Code::InvalidArgument);
            assert!(e.message().contains("must not be negative"), "{e}");
        }
    }

    #[test]
    fn policy_round_trip_and_rules_only_for_allowlist() {
        for p in [
            EgressPolicy::Open,
            EgressPolicy::Sealed,
            EgressPolicy::Deny,
            EgressPolicy::Allowlist {
                cidrs: vec!["1.1.1.0/24".into()],
                domains: vec!["pypi.org".into()],
            },
        ] {
            assert_eq!(policy_from_pb(&policy_to_pb(&p)).unwrap(), p);
        }
        let bad = pb::NetworkPolicy {
            mode: pb::EgressMode::Open as i32,
            allow_cidrs: vec!["1.1.1.1".into()],
            ..Default::default()
        };
        assert!(policy_from_pb(&bad).is_err());
        assert_eq!(
            policy_from_pb(&pb::NetworkPolicy::default()).unwrap(),
            EgressPolicy::Open
        );
    }

    #[test]
    fn timestamps() {
        assert_eq!(ms_of(&ts(1_700_000_000_123)), 1_700_000_000_123);
    }
}
