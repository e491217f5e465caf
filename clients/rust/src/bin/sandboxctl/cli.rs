//! The command line: global flags and the top-level subcommands (each
//! group's own subcommands are beside its handler).

use super::*;

#[derive(Parser)]
#[command(
    name = "sandboxctl",
    version,
    about = "Talon sandboxes from the command line"
)]
pub struct Cli {
    /// The control plane's gRPC endpoint [default: from `login`, or http://127.0.0.1:7070].
    #[arg(long, global = true, env = "TALON_GRPC_URL")]
    pub url: Option<String>,
    /// How read commands print.
    #[arg(long, short, global = true, value_enum, default_value = "text")]
    pub output: Format,
    #[command(subcommand)]
    pub command: Cmd,
}

#[derive(Clone, Copy, PartialEq, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

#[derive(Subcommand)]
pub enum Cmd {
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
