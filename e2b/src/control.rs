//! E2B's control plane (`X-API-KEY`) onto SandboxService: the caller's API
//! key is the credential of every call made for it, so the tenant, role,
//! quotas and audit are Talon's own. Nothing here decides policy.

use crate::credential::api_key;
use crate::error::ApiError;
use crate::ids;
use crate::model::{Detail, Lifecycle, Metric, NewSandbox, Sandbox, Timeout};
use crate::{E2b, network};
use axum::extract::{Path, RawQuery, State};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use http::{HeaderMap, StatusCode};
use std::collections::HashMap;
use std::sync::Arc;
use talon_proto::v1 as pb;
use talon_proto::v1::sandbox_service_client::SandboxServiceClient;

/// E2B's stock templates, which stand for `--e2b-default-template`: `base`
/// (the SDK's default) and `code-interpreter-v1` (the code interpreter
/// SDK's, whose kernels CodeService serves from the default image).
const STOCK_TEMPLATES: &[&str] = &["base", "code-interpreter-v1"];

type Result<T> = std::result::Result<T, ApiError>;

/// A request to the server made with the caller's credential.
pub(crate) fn req<T>(key: &str, msg: T) -> Result<tonic::Request<T>> {
    let mut r = tonic::Request::new(msg);
    let v = crate::credential::bearer(key).ok_or_else(|| {
        ApiError::new(
            StatusCode::UNAUTHORIZED,
            "the API key is not valid header text",
        )
    })?;
    r.metadata_mut().insert("authorization", v);
    Ok(r)
}

pub(crate) fn json<T: serde::de::DeserializeOwned + Default>(body: &Bytes) -> Result<T> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(T::default());
    }
    serde_json::from_slice(body).map_err(|e| ApiError::bad_request(format!("request body: {e}")))
}

pub(crate) fn secs(d: u64) -> prost_types::Duration {
    prost_types::Duration {
        seconds: d as i64,
        nanos: 0,
    }
}

impl E2b {
    pub(crate) fn sandboxes(&self) -> SandboxServiceClient<tonic::transport::Channel> {
        SandboxServiceClient::new(self.channel.clone())
    }

    /// A sandbox the caller may see, by its E2B id; deleted and failed
    /// ones are not found, as in E2B.
    pub(crate) async fn sandbox(&self, key: &str, e2b_id: &str) -> Result<pb::Sandbox> {
        let id = ids::to_talon(e2b_id).ok_or_else(|| ApiError::not_found("sandbox"))?;
        let s = self
            .sandboxes()
            .get_sandbox(req(key, pb::GetSandboxRequest { sandbox_id: id })?)
            .await?
            .into_inner()
            .sandbox
            .unwrap_or_default();
        match pb::SandboxState::try_from(s.state) {
            Ok(pb::SandboxState::Deleted) | Ok(pb::SandboxState::Failed) => {
                Err(ApiError::not_found(&format!("sandbox {e2b_id}")))
            }
            _ => Ok(s),
        }
    }

    /// E2B's name for an image: `base` for the default template.
    fn template_of(&self, image: &str) -> String {
        if image == self.config.default_template {
            "base".into()
        } else {
            image.to_string()
        }
    }

    /// The answer of create and connect, with the sandbox's access token
    /// for the data plane; a caller who may not use the data plane (a
    /// viewer) gets none, and its data-plane calls are refused.
    pub(crate) async fn created(&self, key: &str, s: &pb::Sandbox) -> Result<Sandbox> {
        let token = self
            .sandboxes()
            .create_sandbox_access_token(req(
                key,
                pb::CreateSandboxAccessTokenRequest {
                    sandbox_id: s.sandbox_id.clone(),
                },
            )?)
            .await;
        let envd_access_token = match token {
            Ok(t) => Some(t.into_inner().token),
            Err(st) if st.code() == tonic::Code::PermissionDenied => None,
            Err(st) => return Err(st.into()),
        };
        Ok(Sandbox {
            template_id: self.template_of(&s.image),
            sandbox_id: ids::to_e2b(&s.sandbox_id),
            client_id: crate::CLIENT_ID.into(),
            envd_version: crate::ENVD_VERSION.into(),
            traffic_access_token: envd_access_token.clone(),
            envd_access_token,
            domain: self.config.domain.clone(),
        })
    }

    /// E2B's record of a sandbox; None for states E2B has no name for.
    fn detail(&self, s: &pb::Sandbox) -> Option<Detail> {
        let state = match pb::SandboxState::try_from(s.state).ok()? {
            pb::SandboxState::Pending | pb::SandboxState::Starting | pb::SandboxState::Running => {
                "running"
            }
            pb::SandboxState::Paused | pb::SandboxState::Stopping | pb::SandboxState::Stopped => {
                "paused"
            }
            _ => return None,
        };
        let r = s.resources.unwrap_or_default();
        let ts = |t: &Option<prost_types::Timestamp>| t.map(|t| t.to_string()).unwrap_or_default();
        let open = s
            .network_policy
            .as_ref()
            .is_none_or(|p| p.mode == pb::EgressMode::Open as i32);
        Some(Detail {
            template_id: self.template_of(&s.image),
            sandbox_id: ids::to_e2b(&s.sandbox_id),
            client_id: crate::CLIENT_ID.into(),
            started_at: ts(&s.create_time),
            end_at: ts(&s.expire_time),
            cpu_count: (r.cpu_millis + 999) / 1000,
            memory_mb: r.memory_mib,
            disk_size_mb: r.disk_mib,
            state,
            envd_version: crate::ENVD_VERSION.into(),
            metadata: s.metadata.clone().into_iter().collect(),
            allow_internet_access: open,
            domain: self.config.domain.clone(),
            lifecycle: Lifecycle {
                auto_resume: s.auto_resume,
                on_timeout: if s.timeout_action == pb::TimeoutAction::Delete as i32 {
                    "kill"
                } else {
                    "pause"
                },
            },
        })
    }
}

/// `POST /sandboxes` and `POST /v2/sandboxes`: created and running, or an
/// error; 201 only once the sandbox can serve commands.
pub async fn create(State(e): State<Arc<E2b>>, h: HeaderMap, body: Bytes) -> Result<Response> {
    let key = api_key(&h)?;
    let n: NewSandbox = json(&body)?;
    // E2B's `[{name, path}]`: Talon's volumes, by name (they need
    // workers on the shared workspace backend).
    let volume_mounts = n
        .volume_mounts
        .iter()
        .flatten()
        .map(|m| {
            let field = |k: &str| {
                m.get(k)
                    .and_then(serde_json::Value::as_str)
                    .map(str::to_string)
            };
            match (field("name"), field("path")) {
                (Some(name), Some(path)) => Ok(pb::VolumeMount {
                    name,
                    path,
                    read_only: false,
                }),
                _ => Err(ApiError::bad_request(
                    "each of volumeMounts must be {\"name\": string, \"path\": string}",
                )),
            }
        })
        .collect::<Result<Vec<_>>>()?;
    for (name, v) in [("mcp", &n.mcp), ("iam", &n.iam)] {
        if v.as_ref().is_some_and(|v| !v.is_null()) {
            return Err(ApiError::unsupported(name));
        }
    }
    let auto_resume = match &n.auto_resume {
        None | Some(serde_json::Value::Null) => false,
        Some(v) => v
            .get("enabled")
            .and_then(serde_json::Value::as_bool)
            .ok_or_else(|| ApiError::bad_request("autoResume must be {\"enabled\": true|false}"))?,
    };
    let template = n.template_id.clone().unwrap_or_else(|| "base".into());
    // A snapshot's id is a template too, as in E2B (`Sandbox.create(snapshot_id)`).
    let (image, snapshot_id) = if is_snapshot(&template) {
        (String::new(), template.clone())
    } else if STOCK_TEMPLATES.contains(&template.as_str()) {
        (e.config.default_template.clone(), String::new())
    } else {
        (template.clone(), String::new())
    };
    let policy = network::policy(n.allow_internet_access, n.network.as_ref())?;
    let idempotency_key = h
        .get("idempotency-key")
        .map(|v| {
            v.to_str()
                .map(str::to_string)
                .map_err(|_| ApiError::bad_request("Idempotency-Key is not ASCII"))
        })
        .transpose()?
        .unwrap_or_default();
    let sandbox = pb::Sandbox {
        image,
        snapshot_id,
        metadata: n.metadata.unwrap_or_default().into_iter().collect(),
        env: n.env_vars.unwrap_or_default().into_iter().collect(),
        network_policy: policy,
        timeout: Some(secs(n.timeout.unwrap_or(e.config.default_timeout_secs))),
        timeout_action: if n.auto_pause == Some(true) {
            pb::TimeoutAction::Pause
        } else {
            pb::TimeoutAction::Delete
        } as i32,
        auto_resume,
        volume_mounts,
        ..Default::default()
    };
    let s = e
        .sandboxes()
        .create_sandbox(req(
            &key,
            pb::CreateSandboxRequest {
                sandbox: Some(sandbox),
                wait_until_running: true,
                wait_timeout: Some(secs(e.config.create_wait_secs)),
                idempotency_key,
            },
        )?)
        .await?
        .into_inner()
        .sandbox
        .unwrap_or_default();
    let mut out = e.created(&key, &s).await?;
    out.template_id = template;
    Ok((StatusCode::CREATED, axum::Json(out)).into_response())
}

/// The `metadata` filter as the SDKs send it: one query parameter whose
/// value is itself `k=v&k2=v2`, each part URL-encoded.
fn metadata_filter(q: &HashMap<String, String>) -> HashMap<String, String> {
    q.get("metadata")
        .map(|m| form_urlencoded::parse(m.as_bytes()).into_owned().collect())
        .unwrap_or_default()
}

pub(crate) fn query(raw: &Option<String>) -> HashMap<String, String> {
    form_urlencoded::parse(raw.as_deref().unwrap_or("").as_bytes())
        .into_owned()
        .collect()
}

/// The states asked for (`running,paused`), as Talon's.
fn states(q: &HashMap<String, String>) -> Result<Vec<i32>> {
    let asked = q
        .get("state")
        .map(String::as_str)
        .unwrap_or("running,paused");
    asked
        .split(',')
        .filter(|s| !s.is_empty())
        .map(|s| match s {
            "running" => Ok(vec![
                pb::SandboxState::Pending as i32,
                pb::SandboxState::Starting as i32,
                pb::SandboxState::Running as i32,
            ]),
            "paused" => Ok(vec![
                pb::SandboxState::Paused as i32,
                pb::SandboxState::Stopping as i32,
                pb::SandboxState::Stopped as i32,
            ]),
            other => Err(ApiError::bad_request(format!(
                "unknown state {other:?}: running or paused"
            ))),
        })
        .collect::<Result<Vec<_>>>()
        .map(|v| v.concat())
}

/// Filters this facade does not have, refused rather than ignored.
fn refuse_unsupported(q: &HashMap<String, String>) -> Result<()> {
    if q.get("order").is_some_and(|o| o != "desc") {
        return Err(ApiError::unsupported(
            "order=asc (sandboxes list newest first)",
        ));
    }
    for f in ["startedAfter", "template"] {
        if q.contains_key(f) {
            return Err(ApiError::unsupported(&format!("the {f} filter")));
        }
    }
    Ok(())
}

/// A list's `limit`: 1 to `max`, `default` (at most `max`) when absent.
pub(crate) fn page_limit(q: &HashMap<String, String>, default: i32, max: i32) -> Result<i32> {
    match q.get("limit") {
        Some(l) => l
            .parse::<i32>()
            .ok()
            .filter(|l| (1..=max).contains(l))
            .ok_or_else(|| ApiError::bad_request(format!("limit is 1 to {max}, not {l:?}"))),
        None => Ok(default.min(max)),
    }
}

/// One page as E2B answers it: the items, the next page's token (when
/// there is one) in `x-next-token`.
pub(crate) fn paged<T: serde::Serialize>(items: Vec<T>, next: &str) -> Response {
    let mut resp = axum::Json(items).into_response();
    if !next.is_empty()
        && let Ok(v) = http::HeaderValue::from_str(next)
    {
        resp.headers_mut().insert("x-next-token", v);
    }
    resp
}

/// `GET /v2/sandboxes`: one page, newest first, the next page's token in
/// `x-next-token`.
pub async fn list_v2(
    State(e): State<Arc<E2b>>,
    h: HeaderMap,
    RawQuery(raw): RawQuery,
) -> Result<Response> {
    let key = api_key(&h)?;
    let q = query(&raw);
    refuse_unsupported(&q)?;
    let limit = page_limit(&q, e.config.max_list_limit, e.config.max_list_limit)?;
    let r = e
        .sandboxes()
        .list_sandboxes(req(
            &key,
            pb::ListSandboxesRequest {
                page_size: limit,
                page_token: q.get("nextToken").cloned().unwrap_or_default(),
                states: states(&q)?,
                metadata: metadata_filter(&q),
                ..Default::default()
            },
        )?)
        .await?
        .into_inner();
    let items: Vec<Detail> = r.sandboxes.iter().filter_map(|s| e.detail(s)).collect();
    Ok(paged(items, &r.next_page_token))
}

/// `GET /sandboxes` (the older SDKs): every running or paused sandbox
/// that matches, in one answer.
pub async fn list_v1(
    State(e): State<Arc<E2b>>,
    h: HeaderMap,
    RawQuery(raw): RawQuery,
) -> Result<Response> {
    let key = api_key(&h)?;
    let q = query(&raw);
    refuse_unsupported(&q)?;
    let (mut out, mut token) = (Vec::new(), String::new());
    loop {
        let r = e
            .sandboxes()
            .list_sandboxes(req(
                &key,
                pb::ListSandboxesRequest {
                    page_size: 500,
                    page_token: token,
                    states: states(&q)?,
                    metadata: metadata_filter(&q),
                    ..Default::default()
                },
            )?)
            .await?
            .into_inner();
        out.extend(r.sandboxes.iter().filter_map(|s| e.detail(s)));
        if r.next_page_token.is_empty() || out.len() >= e.config.max_v1_list {
            break;
        }
        token = r.next_page_token;
    }
    Ok(axum::Json(out).into_response())
}

/// `GET /sandboxes/{id}`.
pub async fn get(
    State(e): State<Arc<E2b>>,
    h: HeaderMap,
    Path(id): Path<String>,
) -> Result<Response> {
    let key = api_key(&h)?;
    let s = e.sandbox(&key, &id).await?;
    let d = e
        .detail(&s)
        .ok_or_else(|| ApiError::not_found(&format!("sandbox {id}")))?;
    Ok(axum::Json(d).into_response())
}

/// `DELETE /sandboxes/{id}`: 204, or 404 when there is none (any more).
pub async fn kill(
    State(e): State<Arc<E2b>>,
    h: HeaderMap,
    Path(id): Path<String>,
) -> Result<Response> {
    let key = api_key(&h)?;
    let s = e.sandbox(&key, &id).await?;
    e.sandboxes()
        .delete_sandbox(req(
            &key,
            pb::DeleteSandboxRequest {
                sandbox_id: s.sandbox_id,
            },
        )?)
        .await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// `POST /sandboxes/{id}/timeout`: the sandbox may live `timeout` s from now.
pub async fn set_timeout(
    State(e): State<Arc<E2b>>,
    h: HeaderMap,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Response> {
    let key = api_key(&h)?;
    let t: Timeout = json(&body)?;
    let timeout = t
        .timeout
        .ok_or_else(|| ApiError::bad_request("timeout (seconds) is required"))?;
    let s = e.sandbox(&key, &id).await?;
    e.sandboxes()
        .set_sandbox_timeout(req(
            &key,
            pb::SetSandboxTimeoutRequest {
                sandbox_id: s.sandbox_id,
                timeout: Some(secs(timeout)),
                ..Default::default()
            },
        )?)
        .await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// `POST /sandboxes/{id}/pause`: 204, 409 when it is already paused.
pub async fn pause(
    State(e): State<Arc<E2b>>,
    h: HeaderMap,
    Path(id): Path<String>,
) -> Result<Response> {
    let key = api_key(&h)?;
    let s = e.sandbox(&key, &id).await?;
    if s.state == pb::SandboxState::Paused as i32 {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            format!("sandbox {id} is already paused"),
        ));
    }
    e.sandboxes()
        .pause_sandbox(req(
            &key,
            pb::PauseSandboxRequest {
                sandbox_id: s.sandbox_id,
            },
        )?)
        .await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// How a connect or resume found the sandbox.
enum Woken {
    AlreadyRunning,
    Resumed,
}

/// Resumes (or starts) a sandbox that is not running, and sets its
/// timeout; a running one's timeout is only ever extended.
async fn wake(e: &E2b, key: &str, s: &pb::Sandbox, t: &Timeout) -> Result<Woken> {
    let timeout = t.timeout;
    let id = s.sandbox_id.clone();
    let woken = match pb::SandboxState::try_from(s.state) {
        Ok(pb::SandboxState::Paused) => {
            e.sandboxes()
                .resume_sandbox(req(
                    key,
                    pb::ResumeSandboxRequest {
                        sandbox_id: id.clone(),
                    },
                )?)
                .await?;
            Woken::Resumed
        }
        Ok(pb::SandboxState::Stopped) => {
            e.sandboxes()
                .start_sandbox(req(
                    key,
                    pb::StartSandboxRequest {
                        sandbox_id: id.clone(),
                    },
                )?)
                .await?;
            Woken::Resumed
        }
        _ => Woken::AlreadyRunning,
    };
    if let Some(secs_asked) = timeout {
        let now = talon_core::time::now_ms();
        let until = now + secs_asked as i64 * 1000;
        let current = s
            .expire_time
            .as_ref()
            .map(talon_core::time::timestamp_to_ms)
            .unwrap_or(0);
        if matches!(woken, Woken::Resumed) || until > current {
            e.sandboxes()
                .set_sandbox_timeout(req(
                    key,
                    pb::SetSandboxTimeoutRequest {
                        sandbox_id: id,
                        timeout: Some(secs(secs_asked)),
                        timeout_action: match t.auto_pause {
                            Some(true) => pb::TimeoutAction::Pause as i32,
                            Some(false) => pb::TimeoutAction::Delete as i32,
                            None => pb::TimeoutAction::Unspecified as i32,
                        },
                    },
                )?)
                .await?;
        }
    }
    Ok(woken)
}

/// `POST /sandboxes/{id}/connect` and `/v2/…/connect`: 201 when it was
/// resumed, 200 when it was running (its timeout then only extended).
pub async fn connect(
    State(e): State<Arc<E2b>>,
    h: HeaderMap,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Response> {
    let key = api_key(&h)?;
    let t: Timeout = json(&body)?;
    let s = e.sandbox(&key, &id).await?;
    let status = match wake(&e, &key, &s, &t).await? {
        Woken::Resumed => StatusCode::CREATED,
        Woken::AlreadyRunning => StatusCode::OK,
    };
    Ok((status, axum::Json(e.created(&key, &s).await?)).into_response())
}

/// `POST /sandboxes/{id}/resume` (SDKs before connect): 201, or 409 when
/// it is running already.
pub async fn resume(
    State(e): State<Arc<E2b>>,
    h: HeaderMap,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Response> {
    let key = api_key(&h)?;
    let t: Timeout = json(&body)?;
    let s = e.sandbox(&key, &id).await?;
    if s.state != pb::SandboxState::Paused as i32 && s.state != pb::SandboxState::Stopped as i32 {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            format!("sandbox {id} is not paused"),
        ));
    }
    wake(&e, &key, &s, &t).await?;
    Ok((StatusCode::CREATED, axum::Json(e.created(&key, &s).await?)).into_response())
}

/// `GET /sandboxes/{id}/metrics`: one reading, taken now (Talon keeps no
/// series), in a list as the SDKs expect.
pub async fn metrics(
    State(e): State<Arc<E2b>>,
    h: HeaderMap,
    Path(id): Path<String>,
) -> Result<Response> {
    let key = api_key(&h)?;
    let s = e.sandbox(&key, &id).await?;
    let m = e
        .sandboxes()
        .get_sandbox_metrics(req(
            &key,
            pb::GetSandboxMetricsRequest {
                sandbox_id: s.sandbox_id,
            },
        )?)
        .await?
        .into_inner()
        .metrics
        .unwrap_or_default();
    let at = m.sample_time.unwrap_or_default();
    Ok(axum::Json(vec![Metric {
        timestamp: at.to_string(),
        timestamp_unix: at.seconds,
        cpu_count: m.cpu_count,
        cpu_used_pct: m.cpu_used_pct,
        mem_used: m.mem_used_bytes,
        mem_total: m.mem_total_bytes,
        mem_cache: 0,
        disk_used: m.disk_used_bytes,
        disk_total: m.disk_total_bytes,
    }])
    .into_response())
}

/// `PUT /sandboxes/{id}/network`: the egress policy, replaced.
pub async fn update_network(
    State(e): State<Arc<E2b>>,
    h: HeaderMap,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Response> {
    let key = api_key(&h)?;
    let n: crate::model::Network = json(&body)?;
    let policy = network::policy(n.allow_internet_access, Some(&n))?.unwrap_or(pb::NetworkPolicy {
        mode: pb::EgressMode::Open as i32,
        ..Default::default()
    });
    let s = e.sandbox(&key, &id).await?;
    e.sandboxes()
        .update_network_policy(req(
            &key,
            pb::UpdateNetworkPolicyRequest {
                sandbox_id: s.sandbox_id,
                network_policy: Some(policy),
            },
        )?)
        .await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// Whether an E2B template id is a Talon snapshot's id.
pub(crate) fn is_snapshot(template: &str) -> bool {
    template.starts_with("snp_")
}

/// What E2B has and Talon does not yet: 501, naming it.
pub async fn unsupported(uri: http::Uri) -> ApiError {
    let p = uri.path();
    let what = if p.starts_with("/templates") {
        "templates"
    } else if p.starts_with("/volumes") {
        "volumes"
    } else if p.contains("/logs") {
        "sandbox logs"
    } else {
        "this call"
    };
    ApiError::unsupported(what)
}
