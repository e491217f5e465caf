//! Named volumes: a filesystem of their own that outlives the sandboxes
//! that mount it. The files live on the workers' shared storage (the
//! `shared` workspace backend: `DIR/volumes/ID/`), so a sandbox that
//! mounts one is placed only on a shared worker, and keeps it when the
//! autopilot moves it.
//!
//! A volume is an ext4 image mounted by one kernel, so one sandbox mounts
//! it at a time: the sandbox that names it at create holds it until that
//! sandbox is deleted. Its worker confirming the delete frees it at once;
//! when no worker confirmed (it was unreachable), it is free once a
//! worker lease and the failover grace have passed since the delete,
//! because by then that worker's lease has lapsed and it has stopped
//! (fenced) what it held — the same guarantee failover rests on.

use crate::app::App;
use crate::db::entity::{sandbox, volume};
use crate::db::now_ms;
use crate::domain::state::SandboxState;
use crate::domain::tenants::TenantScope;
use crate::error::{Error, Result};
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, PaginatorTrait, QueryFilter,
    QueryOrder, QuerySelect, Set,
};
use talon_proto::talon::worker::v1 as wpb;

/// Most volumes one sandbox mounts.
pub const MAX_MOUNTS: usize = 8;

/// Where a sandbox mounts a volume, as the sandbox row keeps it (JSON):
/// the id and size are resolved at create, so the spec needs no read.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Mount {
    pub volume_id: String,
    pub name: String,
    pub path: String,
    #[serde(default)]
    pub read_only: bool,
    pub size_mib: i64,
}

/// A mount as asked for on create (by name).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MountRequest {
    pub name: String,
    pub path: String,
    pub read_only: bool,
}

/// A volume's name: as a tenant's (`tenants::validate_name`).
pub fn validate_name(name: &str) -> Result<()> {
    crate::domain::tenants::validate_name(name).map_err(|_| {
        Error::InvalidArgument(format!(
            "volume name {name:?}: 1-63 of [a-z0-9-], not starting with '-'"
        ))
    })
}

/// Where a volume may be mounted: absolute, at most 255 bytes of
/// `[A-Za-z0-9._/-]`, no empty, `.` or `..` component, not `/` and not
/// under the kernel's and the runtime's trees (/proc, /sys, /dev, /run),
/// the agent's (/.talon) or its process logs (/var/log/talon).
/// Symlinks in the image at or above it are refused by the worker when it
/// starts the sandbox (rootfs::check_mount_points).
pub fn validate_path(path: &str) -> Result<()> {
    let bad = |why: &str| {
        Err(Error::InvalidArgument(format!(
            "volume mount path {path:?}: {why}"
        )))
    };
    if !path.starts_with('/') || path.len() > 255 {
        return bad("must be absolute and at most 255 bytes");
    }
    if !path
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"._/-".contains(&b))
    {
        return bad("only [A-Za-z0-9._/-]");
    }
    let parts: Vec<&str> = path[1..].split('/').collect();
    if parts
        .iter()
        .any(|p| p.is_empty() || *p == "." || *p == "..")
    {
        return bad("no empty, '.' or '..' component");
    }
    // The kernel's and the runtime's trees, the agent, and its logs.
    if ["proc", "sys", "dev", "run", ".talon"].contains(&parts[0])
        || parts.starts_with(&["var", "log", "talon"])
    {
        return bad("not under /proc, /sys, /dev, /run, /.talon or /var/log/talon");
    }
    Ok(())
}

pub async fn create(
    app: &App,
    scope: &TenantScope,
    name: &str,
    size_mib: i64,
) -> Result<volume::Model> {
    validate_name(name)?;
    let size_mib = match size_mib {
        0 => app.config().volume_default_mib,
        n if (16..=app.config().volume_max_mib).contains(&n) => n,
        n => {
            return Err(Error::InvalidArgument(format!(
                "size_mib {n}: between 16 and {} (unset: {})",
                app.config().volume_max_mib,
                app.config().volume_default_mib
            )));
        }
    };
    let tenant_id = scope.id();
    // The count and the insert in one transaction under the tenant's
    // lock (and its row's, for other servers on PostgreSQL): concurrent
    // creates are counted together.
    let _lock = app.tenant_lock(tenant_id).lock_owned().await;
    let txn = crate::db::begin_write(app.db()).await?;
    if txn.get_database_backend() == sea_orm::DbBackend::Postgres {
        crate::db::entity::tenant::Entity::find_by_id(tenant_id.to_string())
            .lock(sea_orm::sea_query::LockType::Update)
            .one(&txn)
            .await?;
    }
    let held = volume::Entity::find()
        .filter(volume::Column::TenantId.eq(tenant_id))
        .count(&txn)
        .await?;
    if held >= app.config().volumes_per_tenant {
        return Err(Error::ResourceExhausted(format!(
            "the tenant has {held} volumes, the most it may keep (--volumes-per-tenant)"
        )));
    }
    let row = volume::ActiveModel {
        id: Set(crate::ids::new_id("vol")),
        tenant_id: Set(tenant_id.to_string()),
        name: Set(name.to_string()),
        size_mib: Set(size_mib),
        created_at: Set(now_ms()),
        sandbox_id: Set(String::new()),
        mounted_at: Set(0),
    };
    match row.insert(&txn).await {
        Ok(m) => {
            txn.commit().await?;
            Ok(m)
        }
        Err(e) if crate::error::is_unique_violation(&e) => {
            Err(Error::AlreadyExists(format!("volume {name}")))
        }
        Err(e) => Err(e.into()),
    }
}

pub async fn get(app: &App, scope: &TenantScope, name: &str) -> Result<volume::Model> {
    find(app.db(), scope.id(), name).await
}

async fn find(db: &impl ConnectionTrait, tenant_id: &str, name: &str) -> Result<volume::Model> {
    volume::Entity::find()
        .filter(volume::Column::TenantId.eq(tenant_id))
        .filter(volume::Column::Name.eq(name))
        .one(db)
        .await?
        .ok_or_else(|| Error::NotFound(format!("volume {name}")))
}

pub async fn list(
    app: &App,
    scope: &TenantScope,
    offset: u64,
    limit: u64,
) -> Result<Vec<volume::Model>> {
    Ok(volume::Entity::find()
        .filter(volume::Column::TenantId.eq(scope.id()))
        .order_by_asc(volume::Column::CreatedAt)
        .order_by_asc(volume::Column::Id)
        .offset(offset)
        .limit(limit)
        .all(app.db())
        .await?)
}

/// The sandbox a volume is held by, if that hold still stands: the
/// sandbox is not deleted, or was deleted too recently for its worker to
/// have surely let go (see the module's doc).
async fn holder(app: &App, db: &impl ConnectionTrait, v: &volume::Model) -> Result<Option<String>> {
    if v.sandbox_id.is_empty() {
        return Ok(None);
    }
    let Some(s) = sandbox::Entity::find_by_id(v.sandbox_id.clone())
        .one(db)
        .await?
    else {
        return Ok(None);
    };
    let settle = (app.config().worker_lease + app.config().failover_grace).as_millis() as i64;
    let deleted = s.state == SandboxState::Deleted.as_str();
    Ok((!deleted || s.updated_at + settle > now_ms()).then_some(s.id))
}

/// Deletes a volume and its files: refused while a sandbox holds it; its
/// files (if it was ever mounted) are removed by a worker on the shared
/// storage first, so a volume is never forgotten with its image left
/// behind.
pub async fn delete(app: &App, scope: &TenantScope, name: &str) -> Result<()> {
    let v = find(app.db(), scope.id(), name).await?;
    if let Some(s) = holder(app, app.db(), &v).await? {
        return Err(Error::FailedPrecondition(format!(
            "volume {name} is mounted by sandbox {s}; delete the sandbox first"
        )));
    }
    // Never mounted: no worker made its files.
    if v.mounted_at > 0 {
        let Some(w) = crate::domain::workers::shared_reachable(app)
            .await?
            .into_iter()
            .next()
        else {
            return Err(Error::Unavailable(
                "no worker on the shared workspace backend is connected to remove the volume's files; try again"
                    .into(),
            ));
        };
        let cmd = wpb::Command {
            command_id: String::new(),
            sandbox_id: String::new(),
            generation: 0,
            action: Some(wpb::command::Action::DeleteVolume(
                wpb::DeleteVolumeCommand {
                    volume_id: v.id.clone(),
                },
            )),
        };
        let r = app
            .workers()
            .command(app, &w, cmd, app.config().worker_command_timeout)
            .await?;
        if r.code != 0 {
            return Err(crate::workers::calls::command_error(&w, &r));
        }
    }
    // Only if nothing took it meanwhile (a create that mounted it).
    let res = volume::Entity::delete_many()
        .filter(volume::Column::Id.eq(&v.id))
        .filter(volume::Column::SandboxId.eq(&v.sandbox_id))
        .filter(volume::Column::MountedAt.eq(v.mounted_at))
        .exec(app.db())
        .await?;
    if res.rows_affected == 0 {
        return Err(Error::Aborted(format!(
            "volume {name} was mounted while it was being deleted"
        )));
    }
    Ok(())
}

/// Takes the volumes a create names for sandbox `sandbox_id`, in the
/// create's transaction: each must exist in the tenant and be held by no
/// other sandbox. Returns the mounts the sandbox row keeps.
pub async fn attach(
    app: &App,
    db: &impl ConnectionTrait,
    tenant_id: &str,
    sandbox_id: &str,
    asked: &[MountRequest],
) -> Result<Vec<Mount>> {
    let mut out = Vec::with_capacity(asked.len());
    for m in asked {
        let v = find(db, tenant_id, &m.name).await?;
        if let Some(s) = holder(app, db, &v).await? {
            return Err(Error::FailedPrecondition(format!(
                "volume {} is mounted by sandbox {s}: a volume is mounted by one sandbox at a time",
                m.name
            )));
        }
        let res = volume::Entity::update_many()
            .col_expr(volume::Column::SandboxId, Expr::value(sandbox_id))
            .col_expr(
                volume::Column::MountedAt,
                Expr::value(if v.mounted_at > 0 {
                    v.mounted_at
                } else {
                    now_ms()
                }),
            )
            .filter(volume::Column::Id.eq(&v.id))
            .filter(volume::Column::SandboxId.eq(&v.sandbox_id))
            .exec(db)
            .await?;
        if res.rows_affected != 1 {
            return Err(Error::Aborted(format!(
                "volume {} was taken meanwhile; try again",
                m.name
            )));
        }
        out.push(Mount {
            volume_id: v.id,
            name: v.name,
            path: m.path.clone(),
            read_only: m.read_only,
            size_mib: v.size_mib,
        });
    }
    Ok(out)
}

/// Checks a create's mounts before anything is reserved: names and paths
/// valid, each volume and each path once, at most `MAX_MOUNTS`.
pub fn check_requests(asked: &[MountRequest]) -> Result<()> {
    if asked.len() > MAX_MOUNTS {
        return Err(Error::InvalidArgument(format!(
            "at most {MAX_MOUNTS} volume mounts"
        )));
    }
    let mut names = std::collections::HashSet::new();
    let mut paths = std::collections::HashSet::new();
    for m in asked {
        validate_name(&m.name)?;
        validate_path(&m.path)?;
        if !names.insert(&m.name) {
            return Err(Error::InvalidArgument(format!(
                "volume {} is named twice",
                m.name
            )));
        }
        if !paths.insert(m.path.trim_end_matches('/')) {
            return Err(Error::InvalidArgument(format!("two volumes at {}", m.path)));
        }
    }
    Ok(())
}

/// A sandbox's mounts, as its row keeps them.
pub fn mounts_of(row: &sandbox::Model) -> Result<Vec<Mount>> {
    serde_json::from_str(&row.volume_mounts)
        .map_err(|e| Error::Internal(format!("sandbox {}: volume mounts: {e}", row.id)))
}

/// What the worker mounts.
pub fn attachments(row: &sandbox::Model) -> Result<Vec<wpb::VolumeAttachment>> {
    Ok(mounts_of(row)?
        .into_iter()
        .map(|m| wpb::VolumeAttachment {
            volume_id: m.volume_id,
            path: m.path,
            read_only: m.read_only,
            size_mib: m.size_mib,
        })
        .collect())
}

/// A deleted sandbox's worker confirmed it gone: its volumes are free now.
pub async fn release(app: &App, sandbox_id: &str) -> Result<()> {
    volume::Entity::update_many()
        .col_expr(volume::Column::SandboxId, Expr::value(""))
        .filter(volume::Column::SandboxId.eq(sandbox_id))
        .exec(app.db())
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mount_paths_are_checked() {
        for ok in [
            "/data",
            "/mnt/my-data",
            "/workspace/cache",
            "/home/user/.cache",
        ] {
            validate_path(ok).unwrap_or_else(|e| panic!("{ok}: {e}"));
        }
        for bad in [
            "",
            "/",
            "data",
            "/data/",
            "//data",
            "/a/../etc",
            "/a/./b",
            "/proc",
            "/proc/x",
            "/sys/fs",
            "/dev/shm",
            "/run/secrets",
            "/da ta",
            "/d\u{e9}",
            "/a\\b",
            "/.talon/agent",
            "/var/log/talon",
            "/var/log/talon/x",
        ] {
            assert!(validate_path(bad).is_err(), "{bad:?} accepted");
        }
        assert!(validate_path(&format!("/{}", "a".repeat(255))).is_err());
    }

    #[test]
    fn requests_name_each_volume_and_path_once() {
        let m = |n: &str, p: &str| MountRequest {
            name: n.into(),
            path: p.into(),
            read_only: false,
        };
        assert!(check_requests(&[m("a", "/a"), m("b", "/b")]).is_ok());
        assert!(check_requests(&[m("a", "/a"), m("a", "/b")]).is_err());
        assert!(check_requests(&[m("a", "/a"), m("b", "/a")]).is_err());
        assert!(check_requests(&[m("A", "/a")]).is_err());
        let many: Vec<_> = (0..9)
            .map(|i| m(&format!("v{i}"), &format!("/v{i}")))
            .collect();
        assert!(check_requests(&many).is_err());
    }
}
