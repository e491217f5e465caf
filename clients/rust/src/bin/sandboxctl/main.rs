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

mod commands;
mod terminal;
use terminal::*;

#[derive(Parser)]
#[command(
    name = "sandboxctl",
    version,
    about = "Talon sandboxes from the command line"
)]
struct Cli {
    /// The control plane's gRPC endpoint [default: from `login`, or http://127.0.0.1:7070].
    #[arg(long, global = true, env = "TALON_GRPC_URL")]
    url: Option<String>,
    /// How read commands print.
    #[arg(long, short, global = true, value_enum, default_value = "text")]
    output: Format,
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Clone, Copy, PartialEq, ValueEnum)]
enum Format {
    Text,
    Json,
}

#[derive(Subcommand)]
enum Cmd {
    /// Stores the endpoint and an API key (read from stdin when not given).
    Login {
        #[arg(long)]
        api_key: Option<String>,
    },
    /// Forgets the stored API key.
    Logout,
    /// Who the stored credential is.
    Whoami,
    /// Creates a sandbox and waits until it runs.
    Create {
        /// The image ("host" when neither it nor --snapshot is given).
        #[arg(long)]
        image: Option<String>,
        /// Start from this snapshot's files, on its image.
        #[arg(long, conflicts_with = "image")]
        snapshot: Option<String>,
        /// KEY=VALUE, repeatable.
        #[arg(long = "env")]
        envs: Vec<String>,
        /// Auto-pause after this many seconds.
        #[arg(long)]
        timeout: Option<u64>,
        #[arg(long)]
        cpu_millis: Option<i64>,
        #[arg(long)]
        memory_mib: Option<i64>,
        #[arg(long)]
        no_wait: bool,
        /// KEY=VALUE metadata, repeatable (filterable in `list`).
        #[arg(long)]
        metadata: Vec<String>,
        /// A retried create with the same key returns the first one's sandbox.
        #[arg(long)]
        idempotency_key: Option<String>,
        /// Pause after this many seconds without activity.
        #[arg(long)]
        idle_timeout: Option<u64>,
        /// A call to it while paused resumes it first.
        #[arg(long)]
        auto_resume: bool,
        /// container (the default) or gvisor: a user-space kernel between the code and the host's.
        #[arg(long, value_parser = ["container", "gvisor", "microvm"])]
        isolation: Option<String>,
    },
    /// Lists sandboxes.
    List {
        #[arg(long, default_value_t = 50)]
        page_size: i32,
        #[arg(long, default_value = "")]
        page_token: String,
        /// KEY=VALUE that every listed sandbox's metadata holds, repeatable.
        #[arg(long)]
        metadata: Vec<String>,
        /// Only sandboxes in this state (running, paused, …), repeatable.
        #[arg(long)]
        state: Vec<String>,
    },
    /// Attaches to a sandbox: resumes a paused one, starts a stopped one.
    Connect { id: String },
    /// What a sandbox uses now: cpu, memory, disk.
    Metrics { id: String },
    /// Lets a sandbox live this many seconds from now.
    Timeout { id: String, seconds: u64 },
    /// Shows one sandbox.
    Get { id: String },
    /// Deletes sandboxes.
    Rm { ids: Vec<String> },
    /// Freezes a sandbox.
    Pause { id: String },
    /// New sandboxes from a sandbox's files now, with its settings; all
    /// running when it answers.
    Fork {
        id: String,
        #[arg(long, default_value_t = 1)]
        count: i32,
    },
    /// Filesystem snapshots: take one of a sandbox, list, show, delete
    /// (`create --snapshot ID` starts a sandbox from one).
    #[command(subcommand)]
    Snapshot(SnapshotCmd),
    /// Thaws a paused sandbox.
    Resume { id: String },
    /// Sends a signal to a process.
    Signal {
        id: String,
        #[arg(long)]
        pid: Option<u32>,
        #[arg(long)]
        tag: Option<String>,
        #[arg(long, default_value_t = 15)]
        signal: i32,
    },
    /// Files in a sandbox (relative paths are under /workspace).
    #[command(subcommand)]
    Fs(FsCmd),
    /// Coding-agent runs: a command given a prompt on stdin, its output,
    /// workspace changes and end streamed; exits with the agent's code.
    #[command(subcommand)]
    Agent(AgentCmd),
    /// The sandbox's browser (headless Chromium): start, stop, a
    /// screenshot, and the CDP URL for Playwright or Puppeteer.
    #[command(subcommand)]
    Browser(BrowserCmd),
    /// Code contexts: run Python, JavaScript or Bash with state kept
    /// between runs; `run` exits 1 when the code raised.
    #[command(subcommand)]
    Code(CodeCmd),
    /// Runs a command; exits with its exit code.
    Exec {
        id: String,
        /// Forward stdin.
        #[arg(short, long)]
        interactive: bool,
        #[arg(long)]
        tag: Option<String>,
        #[arg(long)]
        cwd: Option<String>,
        #[arg(long = "env")]
        envs: Vec<String>,
        /// Kill it after this many seconds.
        #[arg(long)]
        timeout: Option<u64>,
        /// Start it and return its pid without waiting (reattach with `logs -f`).
        #[arg(short, long)]
        detach: bool,
        #[arg(last = true, required = true)]
        command: Vec<String>,
    },
    /// An interactive terminal in the sandbox.
    Pty {
        id: String,
        /// Columns, when stdout is not a terminal (or to override it).
        #[arg(long)]
        cols: Option<u32>,
        /// Rows, likewise.
        #[arg(long)]
        rows: Option<u32>,
        #[arg(last = true)]
        command: Vec<String>,
    },
    /// Copies a file: `cp LOCAL ID:PATH` or `cp ID:PATH LOCAL` ("-" is stdin/stdout).
    Cp {
        src: String,
        dst: String,
        /// Read or write the sandbox's side as this user.
        #[arg(long, default_value = "")]
        user: String,
    },
    /// A signed link to one port of a sandbox.
    Preview {
        id: String,
        port: u32,
        /// Seconds the link stays valid (3600 by default, 86400 at most).
        #[arg(long)]
        ttl: Option<u64>,
    },
    /// A process's output.
    Logs {
        id: String,
        #[arg(long)]
        pid: Option<u32>,
        #[arg(long)]
        tag: Option<String>,
        /// Keep following.
        #[arg(short, long)]
        follow: bool,
    },
    /// sandboxctl's version.
    Version,
    /// Shell completions.
    Completions { shell: clap_complete::Shell },
}

#[derive(Subcommand)]
enum AgentCmd {
    /// Runs an agent until it ends (`--prompt -` reads the prompt from stdin).
    Run {
        id: String,
        #[arg(long, default_value = "")]
        prompt: String,
        #[arg(long = "env")]
        envs: Vec<String>,
        /// A tenant secret it gets as an environment variable, repeatable.
        #[arg(long = "secret")]
        secrets: Vec<String>,
        #[arg(long)]
        cwd: Option<String>,
        #[arg(long)]
        user: Option<String>,
        /// Stop it after this many seconds (30 minutes by default).
        #[arg(long)]
        timeout: Option<u64>,
        #[arg(last = true, required = true)]
        command: Vec<String>,
    },
    /// Follows a run by id, from after event `--after`.
    Connect {
        id: String,
        run_id: String,
        #[arg(long, default_value_t = 0)]
        after: u64,
    },
    /// Stops a run.
    Cancel { id: String, run_id: String },
}

#[derive(Subcommand)]
enum BrowserCmd {
    /// Starts it (or shows the running one); prints its CDP URL.
    Start {
        id: String,
        /// "W,H" (1280,720 by default).
        #[arg(long)]
        window_size: Option<String>,
        /// How long the URLs' token lasts, in seconds (1 h by default).
        #[arg(long)]
        ttl: Option<u64>,
    },
    /// Stops it.
    Stop { id: String },
    /// Writes a PNG of the active page to FILE ("-" is stdout).
    Screenshot {
        id: String,
        #[arg(short = 'O', long = "out", default_value = "screenshot.png")]
        out: String,
        /// The whole scrollable page.
        #[arg(long)]
        full_page: bool,
    },
    /// Prints the running browser's CDP URL (with a fresh token).
    CdpUrl { id: String },
}

#[derive(Subcommand)]
enum CodeCmd {
    /// Runs code (from the argument, or stdin when it is "-"), printing
    /// its output as it comes and then its result or error.
    Run {
        id: String,
        code: String,
        /// The context; the language's default context when unset.
        #[arg(long)]
        context: Option<String>,
        /// python, javascript or bash.
        #[arg(long, default_value = "python")]
        language: String,
        /// Seconds before the run is interrupted (300 by default).
        #[arg(long)]
        timeout: Option<u64>,
    },
    /// Starts a context; prints its id.
    Create {
        id: String,
        #[arg(long, default_value = "python")]
        language: String,
        #[arg(long)]
        cwd: Option<String>,
    },
    /// Lists the sandbox's contexts.
    Ls { id: String },
    /// Interrupts a context's run.
    Interrupt { id: String, context: String },
    /// Restarts a context's kernel (its state is lost).
    Restart { id: String, context: String },
    /// Deletes a context.
    Rm { id: String, context: String },
}

fn code_language(l: &str) -> anyhow::Result<talon_sdk::CodeLanguage> {
    use talon_sdk::CodeLanguage as L;
    Ok(match l.to_ascii_lowercase().as_str() {
        "python" => L::Python,
        "javascript" | "js" => L::Javascript,
        "bash" => L::Bash,
        _ => anyhow::bail!("unknown language {l:?}: python, javascript or bash"),
    })
}

fn context_json(c: &talon_proto::v1::CodeContext) -> Value {
    let lang = talon_proto::v1::CodeLanguage::try_from(c.language)
        .map(|l| {
            l.as_str_name()
                .trim_start_matches("CODE_LANGUAGE_")
                .to_lowercase()
        })
        .unwrap_or_default();
    json!({"context_id": c.context_id, "language": lang, "cwd": c.cwd,
           "execution_count": c.execution_count})
}

async fn code(cli: &Cli, c: &CodeCmd) -> anyhow::Result<i32> {
    use talon_proto::v1::run_code_response::Event;
    let fmt = cli.output;
    match c {
        CodeCmd::Run {
            id,
            code,
            context,
            language,
            timeout,
        } => {
            let src = if code == "-" {
                std::io::read_to_string(std::io::stdin())?
            } else {
                code.clone()
            };
            let s = client(cli).await?.get(id).await?;
            let run_in = match context {
                Some(c) => talon_sdk::RunIn::Context(c),
                None => talon_sdk::RunIn::Default(code_language(language)?),
            };
            let x = s
                .code()
                .run(&src, run_in, timeout.map(Duration::from_secs), |ev| {
                    if fmt == Format::Json {
                        return;
                    }
                    match ev {
                        Event::Stdout(o) => {
                            print!("{}", o.text);
                            let _ = std::io::stdout().flush();
                        }
                        Event::Stderr(o) => eprint!("{}", o.text),
                        _ => {}
                    }
                })
                .await?;
            let results: Vec<Value> = x
                .results
                .iter()
                .map(|r| json!({"data": r.data, "is_main_result": r.is_main_result}))
                .collect();
            let error = x
                .error
                .as_ref()
                .map(|e| json!({"name": e.name, "value": e.value, "traceback": e.traceback}));
            if fmt == Format::Json {
                let v = json!({
                    "stdout": x.stdout, "stderr": x.stderr, "results": results,
                    "error": error, "execution_count": x.execution_count,
                    "duration_ms": x.duration.as_millis() as u64,
                    "interrupted": x.interrupted, "timed_out": x.timed_out,
                });
                println!("{}", serde_json::to_string_pretty(&v)?);
            } else {
                for r in &x.results {
                    match r.data.get("text/plain") {
                        Some(t) if r.is_main_result => println!("{t}"),
                        _ => {
                            let mut kinds: Vec<&str> = r.data.keys().map(String::as_str).collect();
                            kinds.sort();
                            println!("[display: {}]", kinds.join(", "));
                        }
                    }
                }
                if let Some(e) = &x.error {
                    for line in &e.traceback {
                        eprintln!("{line}");
                    }
                    eprintln!("{}: {}", e.name, e.value);
                }
            }
            return Ok(if x.error.is_some() { 1 } else { 0 });
        }
        CodeCmd::Create { id, language, cwd } => {
            let s = client(cli).await?.get(id).await?;
            let ctx = s
                .code()
                .create_context(code_language(language)?, cwd.as_deref())
                .await?;
            print(fmt, &context_json(&ctx), || ctx.context_id.clone());
        }
        CodeCmd::Ls { id } => {
            let s = client(cli).await?.get(id).await?;
            let list = s.code().list_contexts().await?;
            let v: Vec<Value> = list.iter().map(context_json).collect();
            print(fmt, &Value::Array(v.clone()), || {
                v.iter()
                    .map(|c| {
                        format!(
                            "{}\t{}\t{}\t{}",
                            c["context_id"].as_str().unwrap_or_default(),
                            c["language"].as_str().unwrap_or_default(),
                            c["execution_count"],
                            c["cwd"].as_str().unwrap_or_default()
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            });
        }
        CodeCmd::Interrupt { id, context } => {
            client(cli)
                .await?
                .get(id)
                .await?
                .code()
                .interrupt(context)
                .await?;
        }
        CodeCmd::Restart { id, context } => {
            let s = client(cli).await?.get(id).await?;
            let ctx = s.code().restart_context(context).await?;
            print(fmt, &context_json(&ctx), || ctx.context_id.clone());
        }
        CodeCmd::Rm { id, context } => {
            client(cli)
                .await?
                .get(id)
                .await?
                .code()
                .delete_context(context)
                .await?;
        }
    }
    Ok(0)
}

#[derive(Subcommand)]
enum FsCmd {
    /// Lists a directory.
    Ls {
        id: String,
        #[arg(default_value = ".")]
        path: String,
    },
    /// Describes a path.
    Stat { id: String, path: String },
    /// Makes a directory and its parents.
    Mkdir { id: String, path: String },
    /// Moves a path.
    Mv {
        id: String,
        from: String,
        to: String,
    },
    /// Removes a path.
    Rm {
        id: String,
        path: String,
        #[arg(short, long)]
        recursive: bool,
    },
    /// A URL that reads (or, with --write, replaces) one file with no other credential.
    Url {
        id: String,
        path: String,
        #[arg(long)]
        write: bool,
        /// Seconds it stays valid (3600 by default, 86400 at most).
        #[arg(long)]
        ttl: Option<u64>,
    },
}

#[derive(serde::Serialize, serde::Deserialize, Default)]
struct Config {
    url: Option<String>,
}

fn config_dir() -> PathBuf {
    std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_else(|| "/".into())).join(".config")
        })
        .join("talon")
}

fn load_config() -> Config {
    std::fs::read(config_dir().join("config.json"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

fn credentials_path() -> PathBuf {
    config_dir().join("credentials")
}

fn url(cli: &Cli) -> String {
    cli.url
        .clone()
        .or(load_config().url)
        .unwrap_or_else(|| "http://127.0.0.1:7070".into())
}

async fn client(cli: &Cli) -> anyhow::Result<Client> {
    let key = match std::env::var("TALON_API_KEY") {
        Ok(k) if !k.is_empty() => k,
        _ => std::fs::read_to_string(credentials_path())
            .map(|s| s.trim().to_string())
            .map_err(|_| {
                anyhow::anyhow!("not logged in: run `sandboxctl login` or set TALON_API_KEY")
            })?,
    };
    Ok(Client::connect(&url(cli), &key).await?)
}

fn pairs(v: &[String]) -> anyhow::Result<std::collections::HashMap<String, String>> {
    v.iter()
        .map(|kv| {
            kv.split_once('=')
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .ok_or_else(|| anyhow::anyhow!("{kv:?} is not KEY=VALUE"))
        })
        .collect()
}

#[derive(Subcommand)]
enum SnapshotCmd {
    /// Snapshots a running or paused sandbox's files.
    Create {
        id: String,
        /// Unique in the tenant; made from the sandbox's id and the time when unset.
        #[arg(long, default_value = "")]
        name: String,
    },
    /// The tenant's snapshots, newest first.
    Ls {
        /// Only those of this sandbox.
        #[arg(long, default_value = "")]
        sandbox: String,
    },
    /// Shows one snapshot.
    Get { snapshot: String },
    /// Deletes snapshots; sandboxes made from them keep their files.
    Rm { snapshots: Vec<String> },
}

fn snapshot_json(s: &pb::Snapshot) -> Value {
    json!({
        "snapshot_id": s.snapshot_id,
        "name": s.name,
        "sandbox_id": s.sandbox_id,
        "image": s.image,
        "size_bytes": s.size_bytes,
    })
}

async fn snapshot(cli: &Cli, c: &SnapshotCmd) -> anyhow::Result<i32> {
    let fmt = cli.output;
    let line = |s: &pb::Snapshot| {
        format!(
            "{}\t{}\t{}\t{}",
            s.snapshot_id, s.name, s.sandbox_id, s.size_bytes
        )
    };
    match c {
        SnapshotCmd::Create { id, name } => {
            let s = client(cli)
                .await?
                .get(id)
                .await?
                .create_snapshot(name)
                .await?;
            print(fmt, &snapshot_json(&s), || s.snapshot_id.clone());
        }
        SnapshotCmd::Ls { sandbox } => {
            let c = client(cli).await?;
            let (mut all, mut token) = (Vec::new(), String::new());
            loop {
                let (page, next) = c.list_snapshots(sandbox, &token).await?;
                all.extend(page);
                if next.is_empty() {
                    break;
                }
                token = next;
            }
            let v: Vec<Value> = all.iter().map(snapshot_json).collect();
            print(fmt, &Value::Array(v), || {
                all.iter().map(line).collect::<Vec<_>>().join("\n")
            });
        }
        SnapshotCmd::Get { snapshot } => {
            let s = client(cli).await?.get_snapshot(snapshot).await?;
            print(fmt, &snapshot_json(&s), || line(&s));
        }
        SnapshotCmd::Rm { snapshots } => {
            let c = client(cli).await?;
            for s in snapshots {
                c.delete_snapshot(s).await?;
                if fmt == Format::Text {
                    println!("{s}");
                }
            }
        }
    }
    Ok(0)
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

async fn browser(cli: &Cli, b: &BrowserCmd) -> anyhow::Result<i32> {
    let show = |info: &talon_proto::v1::Browser| {
        let state = talon_proto::v1::BrowserState::try_from(info.state)
            .map(|s| {
                s.as_str_name()
                    .trim_start_matches("BROWSER_STATE_")
                    .to_lowercase()
            })
            .unwrap_or_default();
        let v = json!({
            "state": state, "cdp_url": info.cdp_url,
            "websocket_debugger_url": info.websocket_debugger_url,
            "live_view_url": info.live_view_url, "pid": info.pid,
            "window_size": info.window_size, "error": info.error,
        });
        print(cli.output, &v, || {
            if info.cdp_url.is_empty() {
                format!("{state} {}", info.error).trim().to_string()
            } else {
                format!("{}\nlive view: {}", info.cdp_url, info.live_view_url)
            }
        });
    };
    match b {
        BrowserCmd::Start {
            id,
            window_size,
            ttl,
        } => {
            let s = client(cli).await?.get(id).await?;
            let info = s
                .browser()
                .start(window_size.as_deref(), ttl.map(Duration::from_secs))
                .await?;
            show(&info);
        }
        BrowserCmd::Stop { id } => {
            let info = client(cli).await?.get(id).await?.browser().stop().await?;
            show(&info);
        }
        BrowserCmd::Screenshot { id, out, full_page } => {
            let s = client(cli).await?.get(id).await?;
            let png = s.browser().screenshot(*full_page).await?;
            if out == "-" {
                std::io::Write::write_all(&mut std::io::stdout(), &png)?;
            } else {
                std::fs::write(out, &png)?;
                eprintln!("{out}: {} bytes", png.len());
            }
        }
        BrowserCmd::CdpUrl { id } => {
            let info = client(cli).await?.get(id).await?.browser().get().await?;
            if info.cdp_url.is_empty() {
                anyhow::bail!("the browser of {id} is not running (sandboxctl browser start {id})");
            }
            println!("{}", info.cdp_url);
        }
    }
    Ok(0)
}

async fn agent(cli: &Cli, a: &AgentCmd) -> anyhow::Result<i32> {
    let run = match a {
        AgentCmd::Run {
            id,
            prompt,
            envs,
            secrets,
            cwd,
            user,
            timeout,
            command,
        } => {
            let prompt = if prompt == "-" {
                let mut p = String::new();
                std::io::Read::read_to_string(&mut std::io::stdin(), &mut p)?;
                p
            } else {
                prompt.clone()
            };
            let s = client(cli).await?.get(id).await?;
            let o = talon_sdk::AgentOptions {
                prompt,
                envs: pairs(envs)?,
                cwd: cwd.clone(),
                user: user.clone(),
                secrets: secrets.clone(),
                timeout: timeout.map(Duration::from_secs),
            };
            s.agent().run(command.clone(), o).await?
        }
        AgentCmd::Connect { id, run_id, after } => {
            let s = client(cli).await?.get(id).await?;
            s.agent().connect(run_id, *after).await?
        }
        AgentCmd::Cancel { id, run_id } => {
            client(cli)
                .await?
                .get(id)
                .await?
                .agent()
                .cancel(run_id)
                .await?;
            return Ok(0);
        }
    };
    follow_agent(cli.output, run).await
}

/// Prints a run's events (text: output lines to stdout and stderr, the
/// rest to stderr; json: one event per line) and returns its exit code.
async fn follow_agent(fmt: Format, mut run: talon_sdk::AgentRun) -> anyhow::Result<i32> {
    use talon_proto::v1::run_agent_response::Event;
    let mut code = 1;
    while let Some(e) = run.next().await? {
        if fmt == Format::Json {
            let v = match &e.event {
                Some(Event::Started(s)) => {
                    json!({"seq": e.seq, "started": {"pid": s.pid, "run_id": s.run_id}})
                }
                Some(Event::Output(o)) => json!({"seq": e.seq, "output": {
                    "stream": if o.stream == 2 { "stderr" } else { "stdout" }, "text": o.text}}),
                Some(Event::FileChange(c)) => json!({"seq": e.seq, "file_change": {"path": c.path,
                    "kind": talon_sdk::change_kind(c.kind)}}),
                Some(Event::Completed(c)) => {
                    json!({"seq": e.seq, "completed": {"exit_code": c.exit_code,
                    "timed_out": c.timed_out,
                    "duration_s": c.duration.map(|d| d.seconds as f64 + d.nanos as f64 / 1e9).unwrap_or(0.0)}})
                }
                None => continue,
            };
            println!("{v}");
        }
        match e.event {
            Some(Event::Started(s)) if fmt != Format::Json => {
                eprintln!("run {} (pid {})", s.run_id, s.pid)
            }
            Some(Event::Output(o)) if fmt != Format::Json => {
                if o.stream == 2 {
                    eprintln!("{}", o.text)
                } else {
                    println!("{}", o.text)
                }
            }
            Some(Event::FileChange(c)) if fmt != Format::Json => {
                eprintln!("~ {} ({})", c.path, talon_sdk::change_kind(c.kind))
            }
            Some(Event::Completed(c)) => {
                code = c.exit_code;
                if fmt != Format::Json && c.timed_out {
                    eprintln!("the run timed out");
                }
            }
            _ => {}
        }
    }
    Ok(code)
}

async fn fs(cli: &Cli, f: &FsCmd) -> anyhow::Result<i32> {
    let c = client(cli).await?;
    let file_json = |f: &pb::FileInfo| {
        json!({
            "path": f.path, "name": f.name, "size": f.size, "mode": f.mode,
            "type": match pb::FileType::try_from(f.r#type) {
                Ok(pb::FileType::Directory) => "dir",
                Ok(pb::FileType::Symlink) => "symlink",
                _ => "file",
            },
        })
    };
    match f {
        FsCmd::Ls { id, path } => {
            let entries = c.get(id).await?.files().list(path).await?;
            let v = json!({"entries": entries.iter().map(file_json).collect::<Vec<_>>()});
            print(cli.output, &v, || {
                entries
                    .iter()
                    .map(|e| format!("{:>10} {}", e.size, e.name))
                    .collect::<Vec<_>>()
                    .join("\n")
            });
        }
        FsCmd::Stat { id, path } => {
            let info = c.get(id).await?.files().stat(path).await?;
            let v = file_json(&info);
            print(cli.output, &v, || {
                format!(
                    "{} {} {} bytes",
                    info.path,
                    v["type"].as_str().unwrap_or(""),
                    info.size
                )
            });
        }
        FsCmd::Mkdir { id, path } => c.get(id).await?.files().make_dir(path).await?,
        FsCmd::Mv { id, from, to } => c.get(id).await?.files().rename(from, to).await?,
        FsCmd::Rm {
            id,
            path,
            recursive,
        } => c.get(id).await?.files().remove(path, *recursive).await?,
        FsCmd::Url {
            id,
            path,
            write,
            ttl,
        } => {
            let url = c
                .get(id)
                .await?
                .file_url(path, *write, ttl.map(Duration::from_secs))
                .await?;
            print(cli.output, &json!({ "url": url }), || url.clone());
        }
    }
    Ok(0)
}
