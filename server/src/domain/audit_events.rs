//! Reading the audit log, scoped: owners read their tenant's records,
//! platform admins any tenant's (or all).

use crate::app::App;
use crate::auth::Principal;
use crate::db::entity::audit_event;
use crate::error::Result;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect};

/// What a caller asks of the log; empty fields match everything.
#[derive(Default)]
pub struct AuditQuery {
    /// A tenant to read: honoured for platform admins only.
    pub tenant_id: String,
    pub actor_id: String,
    pub method: String,
    pub resource_id: String,
    /// Times in ms: from (inclusive) and until (exclusive).
    pub start_ms: Option<i64>,
    pub end_ms: Option<i64>,
    pub offset: u64,
    pub limit: u64,
}

/// One page, newest first (`limit + 1` rows, for the caller's paging).
/// Records of calls made before this one are stored first.
pub async fn list(app: &App, p: &Principal, q: &AuditQuery) -> Result<Vec<audit_event::Model>> {
    app.audit().flush().await;
    let mut s = audit_event::Entity::find();
    // Owners see their own tenant; platform admins any, or one they name.
    if !p.platform_admin {
        s = s.filter(audit_event::Column::TenantId.eq(&p.tenant_id));
    } else if !q.tenant_id.is_empty() {
        s = s.filter(audit_event::Column::TenantId.eq(&q.tenant_id));
    }
    if !q.actor_id.is_empty() {
        s = s.filter(audit_event::Column::ActorId.eq(&q.actor_id));
    }
    if !q.method.is_empty() {
        s = s.filter(audit_event::Column::Method.eq(&q.method));
    }
    if !q.resource_id.is_empty() {
        s = s.filter(audit_event::Column::ResourceId.eq(&q.resource_id));
    }
    if let Some(t) = q.start_ms {
        s = s.filter(audit_event::Column::CreatedAt.gte(t));
    }
    if let Some(t) = q.end_ms {
        s = s.filter(audit_event::Column::CreatedAt.lt(t));
    }
    Ok(s.order_by_desc(audit_event::Column::Id)
        .offset(q.offset)
        .limit(q.limit + 1)
        .all(app.db())
        .await?)
}
