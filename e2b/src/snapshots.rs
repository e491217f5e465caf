//! E2B's snapshots and forks onto SandboxService: a snapshot is a template
//! to E2B's SDKs (created from a sandbox, listed, deleted as a template),
//! and a fork is a set of new sandboxes from one. As in `control`, the
//! caller's API key is the credential of every call.

use crate::E2b;
use crate::control::{is_snapshot, json, page_limit, paged, query, req, secs};
use crate::credential::api_key;
use crate::error::ApiError;
use crate::ids;
use crate::model::{Fork, Forked, NewSnapshot, SnapshotInfo};
use axum::extract::{Path, RawQuery, State};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use http::{HeaderMap, StatusCode};
use std::sync::Arc;
use talon_proto::v1 as pb;

type Result<T> = std::result::Result<T, ApiError>;

fn snapshot_info(s: &pb::Snapshot) -> SnapshotInfo {
    SnapshotInfo {
        snapshot_id: s.snapshot_id.clone(),
        names: vec![s.name.clone()],
    }
}

/// `POST /sandboxes/{id}/snapshots`: CreateSnapshot; 201 `SnapshotInfo`.
/// A memory snapshot (E2B's `mode="full"`) is refused with 400.
pub async fn create_snapshot(
    State(e): State<Arc<E2b>>,
    h: HeaderMap,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Response> {
    let key = api_key(&h)?;
    let n: NewSnapshot = json(&body)?;
    let s = e.sandbox(&key, &id).await?;
    let snap = e
        .sandboxes()
        .create_snapshot(req(
            &key,
            pb::CreateSnapshotRequest {
                sandbox_id: s.sandbox_id,
                name: n.name.unwrap_or_default(),
                memory: n.memory.unwrap_or(false),
            },
        )?)
        .await?
        .into_inner()
        .snapshot
        .unwrap_or_default();
    Ok((StatusCode::CREATED, axum::Json(snapshot_info(&snap))).into_response())
}

/// `GET /snapshots?sandboxID=&limit=&nextToken=`: one page, newest first,
/// the next page's token in `x-next-token`. A `name` filter is refused
/// (501) rather than ignored.
pub async fn list_snapshots(
    State(e): State<Arc<E2b>>,
    h: HeaderMap,
    RawQuery(raw): RawQuery,
) -> Result<Response> {
    let key = api_key(&h)?;
    let q = query(&raw);
    if q.contains_key("name") {
        return Err(ApiError::unsupported("the name filter of snapshots"));
    }
    let limit = page_limit(&q, 100, e.config.max_list_limit)?;
    let sandbox_id = match q.get("sandboxID") {
        Some(id) => ids::to_talon(id).ok_or_else(|| ApiError::not_found("sandbox"))?,
        None => String::new(),
    };
    let r = e
        .sandboxes()
        .list_snapshots(req(
            &key,
            pb::ListSnapshotsRequest {
                page_size: limit,
                page_token: q.get("nextToken").cloned().unwrap_or_default(),
                sandbox_id,
            },
        )?)
        .await?
        .into_inner();
    let items: Vec<SnapshotInfo> = r.snapshots.iter().map(snapshot_info).collect();
    Ok(paged(items, &r.next_page_token))
}

/// `DELETE /templates/{id}`: how the SDKs delete a snapshot (204; 404
/// when there is none). Other templates are Talon's images, which only a
/// platform admin deletes, through Talon's own API: 501.
pub async fn delete_template(
    State(e): State<Arc<E2b>>,
    h: HeaderMap,
    Path(id): Path<String>,
) -> Result<Response> {
    let key = api_key(&h)?;
    if !is_snapshot(&id) {
        return Err(ApiError::unsupported("templates (but snapshots)"));
    }
    e.sandboxes()
        .delete_snapshot(req(&key, pb::DeleteSnapshotRequest { snapshot_id: id })?)
        .await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// `POST /sandboxes/{id}/fork`: ForkSandbox, then each fork's timeout
/// when one is given; 201 with one item per fork.
pub async fn fork(
    State(e): State<Arc<E2b>>,
    h: HeaderMap,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Response> {
    let key = api_key(&h)?;
    let f: Fork = json(&body)?;
    let s = e.sandbox(&key, &id).await?;
    let forks = e
        .sandboxes()
        .fork_sandbox(req(
            &key,
            pb::ForkSandboxRequest {
                sandbox_id: s.sandbox_id,
                count: f.count.unwrap_or(1),
            },
        )?)
        .await?
        .into_inner()
        .sandboxes;
    let mut out = Vec::with_capacity(forks.len());
    for s in &forks {
        if let Some(t) = f.timeout {
            e.sandboxes()
                .set_sandbox_timeout(req(
                    &key,
                    pb::SetSandboxTimeoutRequest {
                        sandbox_id: s.sandbox_id.clone(),
                        timeout: Some(secs(t)),
                        ..Default::default()
                    },
                )?)
                .await?;
        }
        out.push(Forked {
            sandbox: e.created(&key, s).await?,
        });
    }
    Ok((StatusCode::CREATED, axum::Json(out)).into_response())
}
