//! E2B's control-plane JSON, as its SDKs send and parse it (read from
//! `e2b` 2.63.0's generated models). Fields Talon has no counterpart for
//! are accepted when they ask for nothing (null, false, empty) and refused
//! with 501 otherwise. Three are read as what Talon always does and not
//! kept: `secure` (every sandbox is), `autoPauseMemory` and a connect's
//! `memory` (a pause keeps the memory; a resume resumes it).

use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// `POST /sandboxes` and `POST /v2/sandboxes`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NewSandbox {
    #[serde(rename = "templateID")]
    pub template_id: Option<String>,
    /// Seconds.
    pub timeout: Option<u64>,
    pub auto_pause: Option<bool>,
    #[serde(default)]
    pub metadata: Option<HashMap<String, String>>,
    #[serde(default)]
    pub env_vars: Option<HashMap<String, String>>,
    /// snake_case on the wire.
    #[serde(rename = "allow_internet_access")]
    pub allow_internet_access: Option<bool>,
    pub network: Option<Network>,
    /// `{"enabled": bool}`: Talon's `auto_resume`.
    pub auto_resume: Option<serde_json::Value>,
    pub mcp: Option<serde_json::Value>,
    pub iam: Option<serde_json::Value>,
    pub volume_mounts: Option<Vec<serde_json::Value>>,
}

/// E2B's network options, on create and `PUT /sandboxes/{id}/network`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Network {
    pub allow_out: Option<Vec<String>>,
    pub deny_out: Option<Vec<String>>,
    pub allow_public_traffic: Option<bool>,
    pub allow_internet_access: Option<bool>,
    pub dns_servers: Option<Vec<String>>,
    pub egress_proxy: Option<serde_json::Value>,
    pub mask_request_host: Option<serde_json::Value>,
    pub https_ports: Option<Vec<serde_json::Value>>,
    pub rules: Option<serde_json::Value>,
}

/// `POST /sandboxes/{id}/snapshots`. `memory` asks for a memory snapshot
/// (E2B's `mode="full"`), which Talon refuses: its snapshots hold the
/// filesystem (E2B's `mode="filesystem"`); unset takes Talon's kind.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NewSnapshot {
    pub name: Option<String>,
    pub memory: Option<bool>,
}

/// E2B's `SnapshotInfo`: the id `Sandbox.create` takes as a template,
/// and the snapshot's names.
#[derive(Debug, Serialize)]
pub struct SnapshotInfo {
    #[serde(rename = "snapshotID")]
    pub snapshot_id: String,
    pub names: Vec<String>,
}

/// `POST /sandboxes/{id}/fork`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Fork {
    /// Seconds each fork may live.
    pub timeout: Option<u64>,
    /// 1 to 20; 1 when unset.
    pub count: Option<i32>,
}

/// One item of a fork's answer: E2B reports each fork's outcome apart;
/// Talon's forks all start or none is left, so every item has a sandbox.
#[derive(Debug, Serialize)]
pub struct Forked {
    pub sandbox: Sandbox,
}

/// `POST …/connect`, `…/resume` and `…/timeout`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Timeout {
    pub timeout: Option<u64>,
    /// The older `resume` sends it: what the new timeout then does.
    pub auto_pause: Option<bool>,
}

/// The answer of create and connect (`Sandbox` in E2B's spec).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Sandbox {
    #[serde(rename = "templateID")]
    pub template_id: String,
    #[serde(rename = "sandboxID")]
    pub sandbox_id: String,
    #[serde(rename = "clientID")]
    pub client_id: String,
    pub envd_version: String,
    /// `X-Access-Token` of the data plane.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub envd_access_token: Option<String>,
    /// The same token: the code interpreter SDK sends it as
    /// `E2B-Traffic-Access-Token` on its context calls.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub traffic_access_token: Option<String>,
    pub domain: Option<String>,
}

/// `GET /sandboxes/{id}` (`SandboxDetail`), and each item of the lists
/// (`ListedSandbox`, the same fields).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Detail {
    #[serde(rename = "templateID")]
    pub template_id: String,
    #[serde(rename = "sandboxID")]
    pub sandbox_id: String,
    #[serde(rename = "clientID")]
    pub client_id: String,
    pub started_at: String,
    pub end_at: String,
    pub cpu_count: i64,
    #[serde(rename = "memoryMB")]
    pub memory_mb: i64,
    #[serde(rename = "diskSizeMB")]
    pub disk_size_mb: i64,
    /// "running" or "paused".
    pub state: &'static str,
    pub envd_version: String,
    pub metadata: HashMap<String, String>,
    pub allow_internet_access: bool,
    pub domain: Option<String>,
    pub lifecycle: Lifecycle,
}

/// A sandbox's `lifecycle` in E2B's detail: `autoResume` is Talon's
/// `auto_resume`; `onTimeout` is "pause" or "kill".
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Lifecycle {
    pub auto_resume: bool,
    pub on_timeout: &'static str,
}

/// One reading of `GET /sandboxes/{id}/metrics`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Metric {
    pub timestamp: String,
    pub timestamp_unix: i64,
    pub cpu_count: i32,
    pub cpu_used_pct: f64,
    pub mem_used: i64,
    pub mem_total: i64,
    pub mem_cache: i64,
    pub disk_used: i64,
    pub disk_total: i64,
}
