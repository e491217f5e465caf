//! The control plane as a platform admin sees it: its servers (those that
//! heartbeat in `servers`, which peers.rs writes on PostgreSQL), which of
//! them holds the duties lease, and what the database holds by state. On
//! SQLite one server is the platform and records no heartbeat: it is
//! listed alone, as of now.

use crate::app::App;
use crate::db::entity::{lease, sandbox, server};
use crate::domain::lease::{DUTIES, db_now_ms};
use crate::domain::state::SandboxState;
use crate::error::Result;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect};

/// One server, as recorded.
pub struct ServerView {
    pub id: String,
    pub address: String,
    pub heartbeat_ms: i64,
    /// Its heartbeat is within `peers::ALIVE_MS`.
    pub live: bool,
    /// It holds the duties lease now.
    pub leader: bool,
    /// It is this server.
    pub me: bool,
}

/// Every server that has heartbeated, newest heartbeat first; this
/// server is always among them.
pub async fn list(app: &App) -> Result<Vec<ServerView>> {
    let me = app.config().server_id.clone();
    let now = crate::db::now_ms();
    let leader = match lease::Entity::find_by_id(DUTIES.to_string())
        .one(app.db())
        .await?
    {
        Some(l) if l.expires_at >= db_now_ms(app.db()).await? => l.holder,
        _ => String::new(),
    };
    let mut out: Vec<ServerView> = server::Entity::find()
        .order_by_desc(server::Column::HeartbeatAt)
        .all(app.db())
        .await?
        .into_iter()
        .map(|s| ServerView {
            live: s.heartbeat_at >= now - crate::peers::ALIVE_MS || s.id == me,
            leader: s.id == leader,
            me: s.id == me,
            id: s.id,
            address: s.address,
            heartbeat_ms: s.heartbeat_at,
        })
        .collect();
    if !out.iter().any(|s| s.me) {
        out.insert(
            0,
            ServerView {
                leader: me == leader,
                id: me,
                address: String::new(),
                heartbeat_ms: now,
                live: true,
                me: true,
            },
        );
    }
    Ok(out)
}

/// Sandboxes by state across every tenant, the deleted left out.
pub async fn sandboxes_by_state(app: &App) -> Result<Vec<(SandboxState, i64)>> {
    let rows: Vec<(String, i64)> = sandbox::Entity::find()
        .select_only()
        .column(sandbox::Column::State)
        .column_as(sandbox::Column::Id.count(), "n")
        .filter(sandbox::Column::State.ne(SandboxState::Deleted.as_str()))
        .group_by(sandbox::Column::State)
        .into_tuple()
        .all(app.db())
        .await?;
    // An unknown state in the database is an error, never dropped.
    rows.into_iter()
        .map(|(s, n)| Ok((s.parse::<SandboxState>()?, n)))
        .collect()
}
