//! `sandboxctl`: Talon from a terminal, over the Rust SDK (gRPC).
//!
//! `login` keeps the endpoint in $XDG_CONFIG_HOME/talon/config.json and the
//! API key in $XDG_CONFIG_HOME/talon/credentials (mode 0600);
//! TALON_GRPC_URL and TALON_API_KEY override both. Every read command
//! takes `--output json`. `exec` exits with the process's exit code
//! (128 + signal when it was killed).

use clap::{CommandFactory, Parser, Subcommand, ValueEnum};
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::path::PathBuf;
use std::time::Duration;
use talon_proto::v1 as pb;
use talon_sdk::{Client, CreateOptions, Output, RunOptions, Sandbox, Target, state_name};

mod agent;
mod browser;
mod cli;
mod code;
mod commands;
mod config;
mod files;
mod snapshots;
mod terminal;
use agent::*;
use browser::*;
use cli::*;
use code::*;
use config::*;
use files::*;
use snapshots::*;
use terminal::*;

fn pairs(v: &[String]) -> anyhow::Result<std::collections::HashMap<String, String>> {
    v.iter()
        .map(|kv| {
            kv.split_once('=')
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .ok_or_else(|| anyhow::anyhow!("{kv:?} is not KEY=VALUE"))
        })
        .collect()
}

fn sandbox_json(s: &pb::Sandbox) -> Value {
    json!({
        "snapshot_id": s.snapshot_id,
        "sandbox_id": s.sandbox_id,
        "state": state_name(s.state),
        "isolation": pb::Isolation::try_from(s.isolation)
            .unwrap_or_default()
            .as_str_name()
            .trim_start_matches("ISOLATION_")
            .to_lowercase(),
        "image": s.image,
        "state_message": s.state_message,
        "worker_id": s.worker_id,
        "resources": s.resources.as_ref().map(|r| json!({
            "cpu_millis": r.cpu_millis, "memory_mib": r.memory_mib,
            "disk_mib": r.disk_mib, "max_pids": r.max_pids,
        })),
        "labels": s.labels,
        "metadata": s.metadata,
    })
}

fn print(fmt: Format, v: &Value, text: impl FnOnce() -> String) {
    if fmt == Format::Json {
        println!("{}", serde_json::to_string_pretty(v).unwrap_or_default());
    } else {
        println!("{}", text());
    }
}

/// `ID:PATH` → Some((ID, PATH)); a local path → None.
fn remote(s: &str) -> Option<(&str, &str)> {
    s.split_once(':').filter(|(id, _)| id.starts_with("sbx_"))
}

fn exit_code(x: &pb::ProcessExited) -> i32 {
    if x.signal != 0 {
        128 + x.signal
    } else {
        x.exit_code
    }
}

#[tokio::main]
async fn main() {
    let cli = Cli::parse();
    match run(&cli).await {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            let (code, message) = match e.downcast_ref::<talon_sdk::Error>() {
                Some(t) => (t.code_name(), t.message()),
                None => ("ERROR", format!("{e:#}")),
            };
            if cli.output == Format::Json {
                eprintln!("{}", json!({"error": {"code": code, "message": message}}));
            } else {
                eprintln!("sandboxctl: {code}: {message}");
            }
            std::process::exit(1);
        }
    }
}

async fn run(cli: &Cli) -> anyhow::Result<i32> {
    match &cli.command {
        Cmd::Version => {
            let v = env!("CARGO_PKG_VERSION");
            print(cli.output, &json!({"version": v}), || {
                format!("sandboxctl {v}")
            });
        }
        Cmd::Completions { shell } => {
            clap_complete::generate(
                *shell,
                &mut Cli::command(),
                "sandboxctl",
                &mut std::io::stdout(),
            );
        }
        Cmd::Login { api_key } => return commands::login(cli, api_key).await,
        Cmd::Logout => match std::fs::remove_file(credentials_path()) {
            Ok(()) => println!("logged out"),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => println!("not logged in"),
            Err(e) => return Err(e.into()),
        },
        Cmd::Whoami => return commands::whoami(cli).await,
        Cmd::Create {
            image,
            snapshot,
            envs,
            timeout,
            cpu_millis,
            memory_mib,
            no_wait,
            metadata,
            idempotency_key,
            idle_timeout,
            auto_resume,
            isolation,
        } => {
            let s = client(cli)
                .await?
                .create(CreateOptions {
                    image: image.clone(),
                    snapshot_id: snapshot.clone(),
                    envs: pairs(envs)?,
                    metadata: pairs(metadata)?,
                    idempotency_key: idempotency_key.clone(),
                    timeout: timeout.map(Duration::from_secs),
                    idle_timeout: idle_timeout.map(Duration::from_secs),
                    auto_resume: *auto_resume,
                    isolation: isolation
                        .as_deref()
                        .map(|i| {
                            pb::Isolation::from_str_name(&format!("ISOLATION_{}", i.to_uppercase()))
                                .unwrap_or_default()
                        })
                        .unwrap_or_default(),
                    cpu_millis: *cpu_millis,
                    memory_mib: *memory_mib,
                    no_wait: *no_wait,
                    ..Default::default()
                })
                .await?;
            print(cli.output, &sandbox_json(&s.info), || s.id().to_string());
        }
        Cmd::List {
            page_size,
            page_token,
            metadata,
            state,
        } => return commands::list(cli, page_size, page_token, metadata, state).await,
        Cmd::Connect { id } => {
            let s = client(cli).await?.connect_sandbox(id).await?;
            print(cli.output, &sandbox_json(&s.info), || {
                format!("{} {}", s.id(), s.state())
            });
        }
        Cmd::Metrics { id } => return commands::metrics(cli, id).await,
        Cmd::Timeout { id, seconds } => {
            let c = client(cli).await?;
            c.get(id)
                .await?
                .set_timeout(Duration::from_secs(*seconds))
                .await?;
        }
        Cmd::Get { id } => {
            let s = client(cli).await?.get(id).await?;
            print(cli.output, &sandbox_json(&s.info), || {
                format!("{} {} {}", s.id(), s.state(), s.info.image)
            });
        }
        Cmd::Rm { ids } => {
            let c = client(cli).await?;
            for id in ids {
                c.get(id).await?.kill().await?;
                if cli.output == Format::Text {
                    println!("{id}");
                }
            }
            if cli.output == Format::Json {
                println!("{}", json!({ "deleted": ids }));
            }
        }
        Cmd::Exec {
            id,
            interactive,
            tag,
            cwd,
            envs,
            timeout,
            detach,
            command,
        } => {
            let s = client(cli).await?.get(id).await?;
            let o = RunOptions {
                envs: pairs(envs)?,
                cwd: cwd.clone(),
                tag: tag.clone(),
                timeout: timeout.map(Duration::from_secs),
                ..Default::default()
            };
            if *detach {
                let h = s.commands().start(command, o).await?;
                print(cli.output, &json!({"pid": h.pid}), || h.pid.to_string());
                return Ok(0);
            }
            return exec(&s, *interactive, o, command, Events(cli.output)).await;
        }
        Cmd::Pause { id } => client(cli).await?.get(id).await?.pause().await?,
        Cmd::Fork { id, count } => {
            let forks = client(cli).await?.get(id).await?.fork(*count).await?;
            let v: Vec<Value> = forks.iter().map(|s| sandbox_json(&s.info)).collect();
            print(cli.output, &Value::Array(v), || {
                forks
                    .iter()
                    .map(|s| s.id().to_string())
                    .collect::<Vec<_>>()
                    .join("\n")
            });
        }
        Cmd::Snapshot(c) => return snapshot(cli, c).await,
        Cmd::Resume { id } => client(cli).await?.get(id).await?.resume().await?,
        Cmd::Signal {
            id,
            pid,
            tag,
            signal,
        } => {
            let s = client(cli).await?.get(id).await?;
            s.commands().signal(&target(*pid, tag)?, *signal).await?;
        }
        Cmd::Fs(f) => return fs(cli, f).await,
        Cmd::Agent(a) => return agent(cli, a).await,
        Cmd::Browser(b) => return browser(cli, b).await,
        Cmd::Code(c) => return code(cli, c).await,
        Cmd::Pty {
            id,
            cols,
            rows,
            command,
        } => {
            let s = client(cli).await?.get(id).await?;
            let (c, r) = term_size();
            return pty(&s, command, (cols.unwrap_or(c), rows.unwrap_or(r))).await;
        }
        Cmd::Cp { src, dst, user } => return commands::cp(cli, src, dst, user).await,
        Cmd::Preview { id, port, ttl } => {
            let r = client(cli)
                .await?
                .get(id)
                .await?
                .preview_token(*port, ttl.map(Duration::from_secs))
                .await?;
            let v = json!({"url": r.url, "token": r.token, "expire_time": r.expire_time.map(|t| t.seconds)});
            print(cli.output, &v, || r.url.clone());
        }
        Cmd::Logs {
            id,
            pid,
            tag,
            follow,
        } => return commands::logs(cli, id, pid, tag, *follow).await,
    }
    Ok(0)
}

fn target(pid: Option<u32>, tag: &Option<String>) -> anyhow::Result<Target> {
    match (pid, tag) {
        (Some(p), _) => Ok(Target::Pid(p)),
        (None, Some(t)) => Ok(Target::Tag(t.clone())),
        _ => anyhow::bail!("name the process with --pid or --tag"),
    }
}
