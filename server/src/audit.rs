//! The audit log: one record for every mutating call, written by the access
//! layer (rbac.rs) after the call returns. Handlers name the object they
//! acted on by putting an `AuditResource` into the response extensions.

use crate::auth::Principal;
use crate::db::entity::audit_event;
use crate::db::now_ms;
use sea_orm::{ActiveModelTrait, DatabaseConnection, NotSet, Set};
use tonic::Code;

/// The id of the object a call acted on, set by handlers.
#[derive(Clone, Debug)]
pub struct AuditResource(pub String);

/// Marks a tonic response with the object it acted on.
pub fn with_resource<T>(mut resp: tonic::Response<T>, id: impl Into<String>) -> tonic::Response<T> {
    resp.extensions_mut().insert(AuditResource(id.into()));
    resp
}

pub struct AuditRecord {
    tenant_id: String,
    actor_id: String,
    method: String,
    resource_id: String,
    outcome: String,
    request_id: String,
}

impl AuditRecord {
    pub fn new(p: &Principal, method: &str, resource: &str, code: Code, request_id: &str) -> Self {
        AuditRecord {
            tenant_id: p.tenant_id.clone(),
            actor_id: p.actor_id().to_string(),
            method: method.to_string(),
            resource_id: resource.to_string(),
            outcome: code_name(code).to_string(),
            request_id: request_id.to_string(),
        }
    }
}

#[derive(Clone)]
pub struct AuditLog {
    db: DatabaseConnection,
}

impl AuditLog {
    pub fn new(db: DatabaseConnection) -> Self {
        AuditLog { db }
    }

    /// Writes a record before the response leaves. A failure is logged, not
    /// returned: the call itself has already happened.
    pub async fn record(&self, r: AuditRecord) {
        tracing::info!(target: "audit", tenant = %r.tenant_id, actor = %r.actor_id,
            method = %r.method, resource = %r.resource_id, outcome = %r.outcome, request_id = %r.request_id);
        let row = audit_event::ActiveModel {
            id: NotSet,
            created_at: Set(now_ms()),
            tenant_id: Set(r.tenant_id),
            actor_id: Set(r.actor_id),
            method: Set(r.method),
            resource_id: Set(r.resource_id),
            outcome: Set(r.outcome),
            request_id: Set(r.request_id),
        };
        if let Err(e) = row.insert(&self.db).await {
            tracing::error!(error = %e, "could not write audit record");
        }
    }
}

/// The canonical upper-case name of a gRPC code.
pub fn code_name(code: Code) -> &'static str {
    match code {
        Code::Ok => "OK",
        Code::Cancelled => "CANCELLED",
        Code::Unknown => "UNKNOWN",
        Code::InvalidArgument => "INVALID_ARGUMENT",
        Code::DeadlineExceeded => "DEADLINE_EXCEEDED",
        Code::NotFound => "NOT_FOUND",
        Code::AlreadyExists => "ALREADY_EXISTS",
        Code::PermissionDenied => "PERMISSION_DENIED",
        Code::ResourceExhausted => "RESOURCE_EXHAUSTED",
        Code::FailedPrecondition => "FAILED_PRECONDITION",
        Code::Aborted => "ABORTED",
        Code::OutOfRange => "OUT_OF_RANGE",
        Code::Unimplemented => "UNIMPLEMENTED",
        Code::Internal => "INTERNAL",
        Code::Unavailable => "UNAVAILABLE",
        Code::DataLoss => "DATA_LOSS",
        Code::Unauthenticated => "UNAUTHENTICATED",
    }
}
