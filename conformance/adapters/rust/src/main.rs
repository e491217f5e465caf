//! Conformance adapter for the Rust SDK (gRPC): runs each case's steps
//! and writes what it observed. The runner judges.

#![forbid(unsafe_code)]

use serde_json::{Map, Value, json};
use sha2::Digest;
use std::collections::HashMap;
use std::time::Duration;
use talon_sdk::{Client, CreateOptions, Error, Output, RunOptions, Sandbox, Target, shell};

fn key(a: &Map<String, Value>) -> String {
    match a.get("key").and_then(Value::as_str) {
        Some("viewer") => std::env::var("TALON_VIEWER_KEY").unwrap_or_default(),
        Some("alt") => std::env::var("TALON_ALT_KEY").unwrap_or_default(),
        Some("invalid") => format!("tln_invalid0_{}", "x".repeat(32)),
        _ => std::env::var("TALON_API_KEY").unwrap_or_default(),
    }
}

fn s<'a>(a: &'a Map<String, Value>, k: &str) -> &'a str {
    a.get(k).and_then(Value::as_str).unwrap_or("")
}

fn generate(size: u64, seed: u64) -> Vec<u8> {
    (0..size)
        .map(|i| {
            ((i as u32)
                .wrapping_mul(2654435761)
                .wrapping_add(seed as u32)
                >> 24) as u8
        })
        .collect()
}

fn argv(v: Option<&Value>) -> Vec<String> {
    match v {
        Some(Value::String(c)) => shell(c),
        Some(Value::Array(a)) => a
            .iter()
            .map(|x| x.as_str().unwrap_or("").to_string())
            .collect(),
        _ => vec![],
    }
}

fn map(v: Option<&Value>) -> HashMap<String, String> {
    v.and_then(Value::as_object)
        .map(|o| {
            o.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_string()))
                .collect()
        })
        .unwrap_or_default()
}

struct Case {
    url: String,
    slots: HashMap<String, Sandbox>,
}

impl Case {
    async fn client(&self, a: &Map<String, Value>) -> Result<Client, Error> {
        Client::connect(&self.url, &key(a)).await
    }

    fn slot(a: &Map<String, Value>) -> String {
        a.get("slot")
            .and_then(Value::as_str)
            .unwrap_or("a")
            .to_string()
    }

    /// The step's slot, seen with the step's key.
    async fn sandbox(&self, a: &Map<String, Value>) -> Result<Sandbox, Error> {
        let sb = &self.slots[&Self::slot(a)];
        if a.get("key").is_none() {
            return Ok(sb.clone());
        }
        self.client(a).await?.get(sb.id()).await
    }

    async fn step(&mut self, op: &str, a: &Map<String, Value>) -> Result<Value, Error> {
        Ok(match op {
            "create" => {
                let sb = self
                    .client(a)
                    .await?
                    .create(CreateOptions {
                        image: Some(s(a, "image").to_string()).filter(|i| !i.is_empty()),
                        envs: map(a.get("envs")),
                        cpu_millis: Some(250),
                        memory_mib: Some(256),
                        metadata: map(a.get("metadata")),
                        idempotency_key: Some(s(a, "idempotency_key").to_string())
                            .filter(|k| !k.is_empty()),
                        isolation: talon_proto::v1::Isolation::from_str_name(&format!(
                            "ISOLATION_{}",
                            s(a, "isolation").to_uppercase()
                        ))
                        .unwrap_or_default(),
                        ..Default::default()
                    })
                    .await?;
                let same = self
                    .slots
                    .iter()
                    .find(|(_, o)| o.id() == sb.id())
                    .map(|(n, _)| n.clone())
                    .unwrap_or_default();
                let isolation = talon_proto::v1::Isolation::try_from(sb.info.isolation)
                    .unwrap_or_default()
                    .as_str_name()
                    .trim_start_matches("ISOLATION_")
                    .to_lowercase();
                let v = json!({"sandbox_id": sb.id(), "state": sb.state(), "same_as": same, "isolation": isolation});
                self.slots.insert(Self::slot(a), sb);
                v
            }
            "list_filtered" => {
                let c = self.client(a).await?;
                let states: Vec<talon_proto::v1::SandboxState> = a
                    .get("states")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|v| {
                        talon_proto::v1::SandboxState::from_str_name(&format!(
                            "SANDBOX_STATE_{}",
                            v.as_str().unwrap_or("").to_uppercase()
                        ))
                    })
                    .collect();
                let (mut ids, mut token) = (std::collections::HashSet::new(), String::new());
                loop {
                    let (page, next) = c
                        .list_filtered(map(a.get("metadata")), &states, 50, &token)
                        .await?;
                    ids.extend(page.into_iter().map(|s| s.sandbox_id));
                    if next.is_empty() {
                        break;
                    }
                    token = next;
                }
                let mut slots: Vec<&String> = self
                    .slots
                    .iter()
                    .filter(|(_, o)| ids.contains(o.id()))
                    .map(|(n, _)| n)
                    .collect();
                slots.sort();
                json!({ "slots": slots })
            }
            "connect" => {
                let id = self.slots[&Self::slot(a)].id().to_string();
                json!({"state": self.client(a).await?.connect_sandbox(&id).await?.state()})
            }
            "agent_run" => {
                use talon_proto::v1::run_agent_response::Event;
                let sb = self.sandbox(a).await?;
                let o = talon_sdk::AgentOptions {
                    prompt: s(a, "prompt").to_string(),
                    ..Default::default()
                };
                let events = sb
                    .agent()
                    .run(argv(a.get("cmd")), o)
                    .await?
                    .collect()
                    .await?;
                let run_id = match events.first().and_then(|e| e.event.as_ref()) {
                    Some(Event::Started(st)) => st.run_id.clone(),
                    _ => String::new(),
                };
                let again = sb.agent().connect(&run_id, 1).await?.collect().await?;
                let (mut kinds, mut changes, mut out, mut code) =
                    (vec![], vec![], String::new(), -1);
                for e in &events {
                    match &e.event {
                        Some(Event::Started(_)) => kinds.push("started"),
                        Some(Event::Output(o)) => {
                            kinds.push("output");
                            out.push_str(&o.text);
                            out.push('\n');
                        }
                        Some(Event::FileChange(c)) => {
                            kinds.push("file_change");
                            let k = talon_sdk::change_kind(c.kind);
                            changes.push(format!("{k} {}", c.path));
                        }
                        Some(Event::Completed(c)) => {
                            kinds.push("completed");
                            code = c.exit_code;
                        }
                        None => {}
                    }
                }
                let seqs = |v: &[talon_proto::v1::RunAgentResponse]| {
                    v.iter().map(|e| e.seq).collect::<Vec<_>>()
                };
                json!({
                    "kinds": kinds, "output": out, "file_changes": changes, "exit_code": code,
                    "replay_matches": seqs(&again) == seqs(&events[1..]),
                })
            }
            "browser" => {
                let sb = self.sandbox(a).await?;
                let ws = s(a, "window_size");
                let b = sb
                    .browser()
                    .start((!ws.is_empty()).then_some(ws), None)
                    .await?;
                let raw = reqwest::get(format!("{}/json/version", b.cdp_url))
                    .await
                    .map_err(|e| Error::Config(e.to_string()))?
                    .text()
                    .await
                    .map_err(|e| Error::Config(e.to_string()))?;
                let version: Value =
                    serde_json::from_str(&raw).map_err(|e| Error::Config(e.to_string()))?;
                let png = sb.browser().screenshot(false).await?;
                let stopped = sb.browser().stop().await?;
                let state = |v: i32| {
                    talon_proto::v1::BrowserState::try_from(v)
                        .map(|s| {
                            s.as_str_name()
                                .trim_start_matches("BROWSER_STATE_")
                                .to_lowercase()
                        })
                        .unwrap_or_default()
                };
                json!({
                    "state": state(b.state), "window_size": b.window_size,
                    "cdp_url_names_sandbox": b.cdp_url.contains(&format!("/cdp/{}/", sb.id())),
                    "version_ws_matches": version["webSocketDebuggerUrl"] == b.websocket_debugger_url.as_str(),
                    "loopback_hidden": !raw.contains("127.0.0.1:9222"),
                    "png": png.starts_with(b"\x89PNG\r\n\x1a\n"),
                    "stopped_state": state(stopped.state), "stopped_cdp_url": stopped.cdp_url,
                })
            }
            "code" => {
                let sb = self.sandbox(a).await?;
                let lang = match s(a, "language") {
                    "python" => talon_sdk::CodeLanguage::Python,
                    "javascript" => talon_sdk::CodeLanguage::Javascript,
                    "bash" => talon_sdk::CodeLanguage::Bash,
                    other => return Err(Error::Config(format!("unknown language {other}"))),
                };
                let ctx = sb.code().create_context(lang, None).await?;
                let (mut texts, mut stdouts, mut errors) = (vec![], vec![], vec![]);
                for code in a["runs"].as_array().into_iter().flatten() {
                    let x = sb
                        .code()
                        .run(
                            code.as_str().unwrap_or_default(),
                            talon_sdk::RunIn::Context(&ctx.context_id),
                            None,
                            |_| {},
                        )
                        .await?;
                    texts.push(x.text().unwrap_or_default().to_string());
                    stdouts.push(x.stdout.clone());
                    errors.push(x.error.map(|e| e.name).unwrap_or_default());
                }
                sb.code().delete_context(&ctx.context_id).await?;
                json!({"texts": texts, "stdouts": stdouts, "errors": errors})
            }
            "metrics" => {
                let m = self.sandbox(a).await?.metrics().await?;
                json!({
                    "cpu_count": m.cpu_count, "mem_total_mib": m.mem_total_bytes >> 20,
                    "mem_used_positive": m.mem_used_bytes > 0, "disk_used_positive": m.disk_used_bytes > 0,
                })
            }
            "file_url" => {
                let sb = self.sandbox(a).await?;
                let write = s(a, "operation") == "write";
                let url = sb.file_url(s(a, "path"), write, None).await?;
                let http = reqwest::Client::new();
                let req = if write {
                    http.post(&url)
                        .header("content-type", "application/octet-stream")
                        .body(s(a, "text").to_string())
                } else {
                    http.get(&url)
                };
                let resp = req.send().await.map_err(|e| Error::Config(e.to_string()))?;
                let status = resp.status().as_u16();
                let text = resp.text().await.unwrap_or_default();
                if write {
                    json!({ "status": status })
                } else {
                    json!({ "status": status, "text": text })
                }
            }
            "get" => {
                let id = match s(a, "sandbox_id") {
                    "" => self.slots[&Self::slot(a)].id().to_string(),
                    id => id.to_string(),
                };
                json!({"state": self.client(a).await?.get(&id).await?.state()})
            }
            "pause" => {
                self.sandbox(a).await?.pause().await?;
                json!({})
            }
            "resume" => {
                self.sandbox(a).await?.resume().await?;
                json!({})
            }
            "kill" => {
                self.sandbox(a).await?.kill().await?;
                json!({})
            }
            "list_all" => {
                let c = self.client(a).await?;
                let size = a.get("page_size").and_then(Value::as_i64).unwrap_or(50) as i32;
                let (mut ids, mut token, mut pages) = (Vec::new(), String::new(), 0);
                loop {
                    let (page, next) = c.list(size, &token).await?;
                    ids.extend(page.into_iter().map(|s| s.sandbox_id));
                    pages += 1;
                    if next.is_empty() {
                        break;
                    }
                    token = next;
                }
                let unique: std::collections::HashSet<&String> = ids.iter().collect();
                let all = self.slots.values().all(|s| ids.iter().any(|i| i == s.id()));
                json!({"all_created_listed": all, "unique": unique.len() == ids.len(), "pages": pages})
            }
            "run" => {
                let sb = self.sandbox(a).await?;
                let r = sb
                    .commands()
                    .run(
                        &argv(a.get("cmd")),
                        RunOptions {
                            envs: map(a.get("envs")),
                            cwd: Some(s(a, "cwd").to_string()).filter(|c| !c.is_empty()),
                            timeout: a
                                .get("timeout_s")
                                .and_then(Value::as_f64)
                                .map(Duration::from_secs_f64),
                            stdin: a
                                .get("stdin")
                                .and_then(Value::as_str)
                                .map(|x| x.as_bytes().to_vec()),
                            ..Default::default()
                        },
                    )
                    .await?;
                json!({"stdout": r.stdout, "stderr": r.stderr, "exit_code": r.exit_code,
                       "signal": r.signal, "timed_out": r.timed_out})
            }
            "run_bg" => {
                let sb = self.sandbox(a).await?;
                let h = sb
                    .commands()
                    .start(
                        &argv(a.get("cmd")),
                        RunOptions {
                            tag: Some(s(a, "tag").to_string()),
                            ..Default::default()
                        },
                    )
                    .await?;
                json!({"pid": h.pid})
            }
            "reconnect" => {
                let sb = self.sandbox(a).await?;
                let r = sb
                    .commands()
                    .connect(&Target::Tag(s(a, "tag").to_string()), 0)
                    .await?
                    .collect()
                    .await?;
                json!({"stdout": r.stdout, "stderr": r.stderr, "exit_code": r.exit_code, "signal": r.signal})
            }
            "signal" => {
                let sb = self.sandbox(a).await?;
                let sig = a.get("signal").and_then(Value::as_i64).unwrap_or(9) as i32;
                sb.commands()
                    .signal(&Target::Tag(s(a, "tag").to_string()), sig)
                    .await?;
                json!({})
            }
            "pty" => {
                let sb = self.sandbox(a).await?;
                let cols = a.get("cols").and_then(Value::as_u64).unwrap_or(80) as u32;
                let rows = a.get("rows").and_then(Value::as_u64).unwrap_or(24) as u32;
                let mut h = sb
                    .commands()
                    .start(
                        &argv(a.get("cmd")),
                        RunOptions {
                            pty: Some((cols, rows)),
                            ..Default::default()
                        },
                    )
                    .await?;
                sb.commands()
                    .send_stdin(&Target::Pid(h.pid), s(a, "input").as_bytes().to_vec())
                    .await?;
                let (mut out, mut code) = (Vec::new(), -1);
                while let Some(o) = h.next().await? {
                    match o {
                        Output::Stdout(d) | Output::Stderr(d) => out.extend(d),
                        Output::Exited(x) => code = x.exit_code,
                        Output::Started(_) => {}
                    }
                }
                json!({"output": String::from_utf8_lossy(&out), "exit_code": code})
            }
            "write" => {
                let sb = self.sandbox(a).await?;
                let data = match a.get("generate").and_then(Value::as_object) {
                    Some(g) => generate(
                        g.get("size").and_then(Value::as_u64).unwrap_or(0),
                        g.get("seed").and_then(Value::as_u64).unwrap_or(0),
                    ),
                    None => s(a, "text").as_bytes().to_vec(),
                };
                json!({"size": sb.files().write_as(s(a, "path"), &data, s(a, "user")).await?.size})
            }
            "read" => {
                let sb = self.sandbox(a).await?;
                let data = sb.files().read_as(s(a, "path"), s(a, "user")).await?;
                let mut v =
                    json!({"size": data.len(), "sha256": hex::encode(sha2::Sha256::digest(&data))});
                if let Ok(t) = std::str::from_utf8(&data) {
                    v["text"] = t.into();
                }
                v
            }
            "list_dir" => {
                let sb = self.sandbox(a).await?;
                let mut names: Vec<String> = sb
                    .files()
                    .list(s(a, "path"))
                    .await?
                    .into_iter()
                    .map(|f| f.name)
                    .collect();
                names.sort();
                json!({"names": names})
            }
            "stat" => {
                let sb = self.sandbox(a).await?;
                let f = sb.files().stat(s(a, "path")).await?;
                let t = match talon_proto::v1::FileType::try_from(f.r#type) {
                    Ok(talon_proto::v1::FileType::Directory) => "dir",
                    Ok(talon_proto::v1::FileType::Symlink) => "symlink",
                    _ => "file",
                };
                json!({"size": f.size, "type": t})
            }
            "mkdir" => {
                self.sandbox(a)
                    .await?
                    .files()
                    .make_dir(s(a, "path"))
                    .await?;
                json!({})
            }
            "move" => {
                self.sandbox(a)
                    .await?
                    .files()
                    .rename(s(a, "from"), s(a, "to"))
                    .await?;
                json!({})
            }
            "remove" => {
                let rec = a.get("recursive").and_then(Value::as_bool).unwrap_or(false);
                self.sandbox(a)
                    .await?
                    .files()
                    .remove(s(a, "path"), rec)
                    .await?;
                json!({})
            }
            "exists" => {
                let sb = self.sandbox(a).await?;
                match sb.files().stat(s(a, "path")).await {
                    Ok(_) => json!({"exists": true}),
                    Err(e) if e.code() == talon_sdk::Code::NotFound => json!({"exists": false}),
                    Err(e) => return Err(e),
                }
            }
            "preview_token" => {
                let sb = self.sandbox(a).await?;
                let ttl = a
                    .get("ttl_s")
                    .and_then(Value::as_u64)
                    .map(Duration::from_secs);
                let port = a.get("port").and_then(Value::as_u64).unwrap_or(0) as u32;
                let r = sb.preview_token(port, ttl).await?;
                json!({"url": r.url, "token_present": !r.token.is_empty(),
                       "url_names_sandbox": r.url.contains(sb.id())})
            }
            "whoami" => json!({"tenant_id": self.client(a).await?.whoami().await?.tenant_id}),
            other => {
                return Ok(json!({"error": "ADAPTER", "message": format!("unknown op {other}")}));
            }
        })
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let cases: Vec<Value> = serde_json::from_slice(&std::fs::read(&args[1])?)?;
    let url = std::env::var("TALON_GRPC_URL").unwrap_or_else(|_| "http://127.0.0.1:7070".into());
    let mut results = Map::new();
    for c in cases {
        let mut case = Case {
            url: url.clone(),
            slots: HashMap::new(),
        };
        let mut out = Vec::new();
        for st in c["steps"].as_array().cloned().unwrap_or_default() {
            let empty = Map::new();
            let a = st["args"].as_object().unwrap_or(&empty);
            let r = match case.step(st["op"].as_str().unwrap_or(""), a).await {
                Ok(v) => v,
                Err(e) => json!({"error": e.code_name(), "message": e.message()}),
            };
            out.push(r);
        }
        for sb in case.slots.values() {
            let _ = sb.kill().await;
        }
        results.insert(
            c["name"].as_str().unwrap_or("").to_string(),
            Value::Array(out),
        );
    }
    std::fs::write(&args[2], serde_json::to_vec_pretty(&results)?)?;
    Ok(())
}
