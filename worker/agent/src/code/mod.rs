//! Code contexts (CodeService): kernels inside the sandbox that keep their
//! state between runs, each a hidden process of the sandbox. A Python
//! context is an ipykernel spoken to in the Jupyter messaging protocol
//! (`jupyter`, over `zmtp`); JavaScript (Node) and Bash contexts are
//! driven over their stdin (`line`). Runs in one context are one at a
//! time; interrupt and restart reach the kernel's process without waiting
//! for the run. A kernel that dies is started afresh by the next run.

pub mod env;
pub mod jupyter;
pub mod line;
pub mod zmtp;

use crate::supervisor::{Proc, Supervisor};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, Ordering};
use std::time::{Duration, Instant};
use talon_proto::v1 as pb;
use tokio::sync::{Mutex, Notify, mpsc};
use tonic::Status;

/// Contexts one sandbox may have at once, unless `--max-code-contexts`
/// says otherwise.
pub const MAX_CONTEXTS: usize = 16;
/// A run's timeout when the request sets none.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);
/// How long a kernel may take to answer after it starts.
pub const START_TIMEOUT: Duration = Duration::from_secs(60);
/// The most code one run may carry.
pub const MAX_CODE: usize = 1 << 20;

struct Kernel {
    proc: Arc<Proc>,
    session: jupyter::Session,
}

enum Backend {
    Jupyter(Kernel),
    Line(line::LineKernel),
}

impl Backend {
    fn pid(&self) -> u32 {
        match self {
            Backend::Jupyter(k) => k.proc.pid,
            Backend::Line(k) => k.proc.pid,
        }
    }
}

type Tx = mpsc::Sender<Result<pb::RunCodeResponse, Status>>;

/// Where a run's events go; a discarding sink for runs nobody reads.
pub struct Sink {
    tx: Option<Tx>,
}

impl Sink {
    fn discard() -> Sink {
        Sink { tx: None }
    }

    /// False once the caller has gone.
    async fn send(&self, e: pb::run_code_response::Event) -> bool {
        match &self.tx {
            Some(tx) => tx
                .send(Ok(pb::RunCodeResponse { event: Some(e) }))
                .await
                .is_ok(),
            None => true,
        }
    }

    async fn output(&self, stream: u8, text: String) -> bool {
        use pb::run_code_response::Event;
        let out = pb::CodeOutput { text };
        self.send(if stream == 2 {
            Event::Stderr(out)
        } else {
            Event::Stdout(out)
        })
        .await
    }
}

pub struct Context {
    pub id: String,
    pub language: pb::CodeLanguage,
    pub cwd: String,
    env: HashMap<String, String>,
    created: prost_types::Timestamp,
    count: AtomicI32,
    /// The kernel's pid, for interrupt and restart while a run holds it.
    pid: AtomicU32,
    interrupted: AtomicBool,
    /// Wakes a line kernel's run on InterruptCodeContext.
    interrupts: Notify,
    kernel: Mutex<Option<Backend>>,
}

impl Context {
    pub fn describe(&self) -> pb::CodeContext {
        pb::CodeContext {
            context_id: self.id.clone(),
            language: self.language as i32,
            cwd: self.cwd.clone(),
            create_time: Some(self.created),
            execution_count: self.count.load(Ordering::Relaxed),
        }
    }
}

pub struct Contexts {
    sup: Arc<Supervisor>,
    workspace: String,
    /// Most contexts at once (`--max-code-contexts`).
    max: usize,
    map: std::sync::Mutex<Vec<Arc<Context>>>,
    /// The default context of each language (RunCode without an id).
    defaults: Mutex<HashMap<i32, String>>,
}

impl Contexts {
    pub fn new(sup: Arc<Supervisor>, workspace: String, max: usize) -> Arc<Contexts> {
        Arc::new(Contexts {
            sup,
            workspace,
            max,
            map: std::sync::Mutex::new(Vec::new()),
            defaults: Mutex::new(HashMap::new()),
        })
    }

    pub fn list(&self) -> Vec<pb::CodeContext> {
        self.map
            .lock()
            .expect("contexts")
            .iter()
            .map(|c| c.describe())
            .collect()
    }

    pub fn get(&self, id: &str) -> Result<Arc<Context>, Status> {
        self.map
            .lock()
            .expect("contexts")
            .iter()
            .find(|c| c.id == id)
            .cloned()
            .ok_or_else(|| Status::not_found(format!("code context {id} not found")))
    }

    /// Starts a context and its kernel.
    pub async fn create(&self, req: &pb::CreateCodeContextRequest) -> Result<Arc<Context>, Status> {
        let language = match pb::CodeLanguage::try_from(req.language) {
            Ok(pb::CodeLanguage::Unspecified) => {
                return Err(Status::invalid_argument("language is required"));
            }
            Ok(l) => l,
            Err(_) => {
                return Err(Status::invalid_argument(format!(
                    "unknown language {}",
                    req.language
                )));
            }
        };
        let cwd = if req.cwd.is_empty() {
            self.workspace.clone()
        } else {
            req.cwd.clone()
        };
        if !std::path::Path::new(&cwd).is_dir() {
            return Err(Status::invalid_argument(format!(
                "cwd {cwd:?} is not a directory"
            )));
        }
        if self.map.lock().expect("contexts").len() >= self.max {
            return Err(Status::resource_exhausted(format!(
                "a sandbox has at most {} code contexts; delete one",
                self.max
            )));
        }
        let ctx = Arc::new(Context {
            id: format!("ctx_{:016x}", crate::files::rand_suffix()),
            language,
            cwd,
            env: req.env.clone(),
            created: crate::watch::now(),
            count: AtomicI32::new(0),
            pid: AtomicU32::new(0),
            interrupted: AtomicBool::new(false),
            interrupts: Notify::new(),
            kernel: Mutex::new(None),
        });
        {
            let mut k = ctx.kernel.lock().await;
            *k = Some(self.start_kernel(&ctx).await?);
        }
        self.map.lock().expect("contexts").push(ctx.clone());
        Ok(ctx)
    }

    /// Starts a context's kernel in a fresh private directory of its own.
    async fn start_kernel(&self, ctx: &Context) -> Result<Backend, Status> {
        let dir = kernel_dir(ctx);
        let _ = std::fs::remove_dir_all(&dir);
        let made = {
            use std::os::unix::fs::DirBuilderExt;
            std::fs::DirBuilder::new().mode(0o700).create(&dir)
        };
        made.map_err(|e| Status::internal(format!("the kernel's directory: {e}")))?;
        let started = match ctx.language {
            pb::CodeLanguage::Python => self.start_python(ctx, &dir).await.map(Backend::Jupyter),
            pb::CodeLanguage::Javascript | pb::CodeLanguage::Bash => {
                let lang = if ctx.language == pb::CodeLanguage::Bash {
                    line::Lang::Bash
                } else {
                    line::Lang::Js
                };
                line::LineKernel::start(&self.sup, lang, &ctx.id, &ctx.cwd, &ctx.env, dir.clone())
                    .await
                    .map(Backend::Line)
            }
            pb::CodeLanguage::Unspecified => Err(Status::invalid_argument("language is required")),
        };
        match started {
            Ok(b) => {
                ctx.pid.store(b.pid(), Ordering::Relaxed);
                Ok(b)
            }
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dir);
                Err(e)
            }
        }
    }

    async fn start_python(&self, ctx: &Context, dir: &str) -> Result<Kernel, Status> {
        let ports = jupyter::Ports::pick().map_err(|e| Status::internal(format!("ports: {e}")))?;
        let key = format!(
            "{:016x}{:016x}",
            crate::files::rand_suffix(),
            crate::files::rand_suffix()
        );
        // The connection file holds the key: private to the user the
        // agent and its kernels run as, in the kernel's own directory.
        let file = format!("{dir}/connection.json");
        let body = ports.connection_file(&key).to_string();
        let written = line::write_private(&file, body.as_bytes());
        written.map_err(|e| Status::internal(format!("the connection file: {e}")))?;
        let proc = self.sup.spawn_as(
            &pb::StartProcessRequest {
                command: vec![
                    "python3".into(),
                    "-m".into(),
                    "ipykernel_launcher".into(),
                    "-f".into(),
                    file,
                    "--IPKernelApp.parent_handle=0".into(),
                    // Tracebacks as plain text: agents read them.
                    "--InteractiveShell.colors=NoColor".into(),
                ],
                env: ctx.env.clone(),
                cwd: ctx.cwd.clone(),
                tag: format!("code-{}-{:08x}", ctx.id, crate::files::rand_suffix() as u32),
                ..Default::default()
            },
            true,
        )?;
        let deadline = tokio::time::Instant::now() + START_TIMEOUT;
        let session = tokio::select! {
            s = jupyter::Session::connect(&ports, &key, deadline) => s,
            _ = exited(&proc) => Err(Status::failed_precondition(format!(
                "the Python kernel exited as it started ({}); is ipykernel installed in the image? \
                 (Debian: python3-ipykernel)",
                tail(&proc)
            ))),
        };
        let mut session = match session {
            Ok(s) => s,
            Err(e) => {
                let _ = proc.signal(libc::SIGKILL);
                return Err(e);
            }
        };
        // A kernel answers kernel_info once it serves; until then IOPub
        // may miss the first run's output.
        let ready = tokio::time::timeout_at(deadline, async {
            loop {
                let id = session.shell_request("kernel_info_request", serde_json::json!({})).await?;
                let wait = tokio::time::sleep(Duration::from_millis(500));
                tokio::pin!(wait);
                loop {
                    tokio::select! {
                        r = session.shell_reply() => {
                            if r?.parent_id == id {
                                // Drain IOPub's welcome (status) briefly.
                                let _ = tokio::time::timeout(Duration::from_millis(50), session.iopub()).await;
                                return Ok::<(), Status>(());
                            }
                        }
                        _ = &mut wait => break,
                    }
                }
            }
        })
        .await;
        match ready {
            Ok(Ok(())) => Ok(Kernel { proc, session }),
            Ok(Err(e)) => {
                let _ = proc.signal(libc::SIGKILL);
                Err(e)
            }
            Err(_) => {
                let _ = proc.signal(libc::SIGKILL);
                Err(Status::deadline_exceeded(
                    "the kernel did not answer within 60 s",
                ))
            }
        }
    }

    /// The context a run goes to: the named one, or the language's default
    /// (made on first use).
    pub async fn for_run(&self, req: &pb::RunCodeRequest) -> Result<Arc<Context>, Status> {
        if !req.context_id.is_empty() {
            return self.get(&req.context_id);
        }
        let language = if req.language == 0 {
            pb::CodeLanguage::Python as i32
        } else {
            req.language
        };
        let mut d = self.defaults.lock().await;
        if let Some(id) = d.get(&language)
            && let Ok(c) = self.get(id)
        {
            return Ok(c);
        }
        let c = self
            .create(&pb::CreateCodeContextRequest {
                language,
                ..Default::default()
            })
            .await?;
        d.insert(language, c.id.clone());
        Ok(c)
    }

    pub fn interrupt(&self, ctx: &Context) -> Result<(), Status> {
        let pid = ctx.pid.load(Ordering::Relaxed);
        if pid == 0 {
            return Err(Status::failed_precondition(
                "the context's kernel is not running",
            ));
        }
        ctx.interrupted.store(true, Ordering::Relaxed);
        // ipykernel takes SIGINT itself; a line kernel's group takes it,
        // so that what the shell or Node started stops too.
        let target = if ctx.language == pb::CodeLanguage::Python {
            pid as i32
        } else {
            -(pid as i32)
        };
        // SAFETY: kill(2) on a child of ours (or its process group).
        unsafe { libc::kill(target, libc::SIGINT) };
        ctx.interrupts.notify_waiters();
        Ok(())
    }

    /// Kills the kernel (a run in it ends), then starts a new one.
    pub async fn restart(&self, ctx: &Arc<Context>) -> Result<(), Status> {
        kill(ctx);
        let mut k = ctx.kernel.lock().await;
        k.take();
        ctx.count.store(0, Ordering::Relaxed);
        *k = Some(self.start_kernel(ctx).await?);
        Ok(())
    }

    pub async fn delete(&self, id: &str) -> Result<(), Status> {
        let ctx = self.get(id)?;
        kill(&ctx);
        self.map.lock().expect("contexts").retain(|c| c.id != id);
        ctx.kernel.lock().await.take();
        let _ = std::fs::remove_dir_all(kernel_dir(&ctx));
        Ok(())
    }

    /// Runs code, sending its events; the last is `completed`.
    pub async fn run(
        &self,
        ctx: Arc<Context>,
        code: String,
        env: env::RunEnv,
        timeout: Duration,
        tx: Tx,
    ) {
        use pb::run_code_response::Event;
        // A sandbox is not idle while its code runs (see activity).
        let _busy = crate::activity::busy();
        let sink = Sink {
            tx: Some(tx.clone()),
        };
        let mut guard = ctx.kernel.lock().await;
        if guard.is_none() {
            // Its kernel died in an earlier run (which said so): a new one.
            match self.start_kernel(&ctx).await {
                Ok(b) => {
                    ctx.count.store(0, Ordering::Relaxed);
                    *guard = Some(b);
                }
                Err(e) => {
                    let _ = tx.send(Err(e)).await;
                    return;
                }
            }
        }
        let Some(backend) = guard.as_mut() else {
            return;
        };
        ctx.interrupted.store(false, Ordering::Relaxed);
        let started = Instant::now();
        let (count, timed_out, died) = match backend {
            Backend::Jupyter(kernel) => {
                match run_jupyter(self, &ctx, kernel, code, &env, timeout, &sink).await {
                    Ok(r) => r,
                    Err(e) => {
                        let _ = tx.send(Err(e)).await;
                        return;
                    }
                }
            }
            Backend::Line(kernel) => {
                match kernel
                    .run(
                        &code,
                        &env,
                        timeout,
                        &ctx.interrupts,
                        &ctx.interrupted,
                        &sink,
                        true,
                    )
                    .await
                {
                    Ok(end) => {
                        let n = ctx.count.load(Ordering::Relaxed) + 1;
                        (n, end.timed_out, end.died)
                    }
                    Err(e) => {
                        let _ = tx.send(Err(e)).await;
                        return;
                    }
                }
            }
        };
        if let Some(why) = died {
            // The kernel went away (killed, restarted, or it exited); the
            // next run starts a new one.
            *guard = None;
            let by_request = kernel_gone_by_request(&ctx);
            // What is left of it (a kernel we lost touch with) goes.
            kill(&ctx);
            let value = if by_request {
                "the context was restarted or deleted".to_string()
            } else {
                format!("the kernel died ({why}); its state is lost, the next run starts a new one")
            };
            sink.send(Event::CodeError(pb::CodeError {
                name: "KernelDied".into(),
                value,
                traceback: vec![],
            }))
            .await;
        }
        ctx.count.store(count, Ordering::Relaxed);
        let d = started.elapsed();
        sink.send(Event::Completed(pb::CodeCompleted {
            execution_count: count,
            duration: Some(prost_types::Duration {
                seconds: d.as_secs() as i64,
                nanos: d.subsec_nanos() as i32,
            }),
            interrupted: ctx.interrupted.load(Ordering::Relaxed) || timed_out,
            timed_out,
        }))
        .await;
    }
}

/// A run in an ipykernel: execute_request, then its IOPub messages until
/// the kernel is idle and has replied. Gives the execution count, whether
/// the timeout fired, and why the kernel died if it did.
async fn run_jupyter(
    contexts: &Contexts,
    ctx: &Arc<Context>,
    kernel: &mut Kernel,
    code: String,
    env: &env::RunEnv,
    timeout: Duration,
    sink: &Sink,
) -> Result<(i32, bool, Option<String>), Status> {
    use pb::run_code_response::Event;
    if !env.is_empty() {
        kernel
            .session
            .run_silent(&env.python_set(), START_TIMEOUT)
            .await
            .map_err(|e| Status::internal(format!("the run's environment: {}", e.message())))?;
    }
    let content = serde_json::json!({
        "code": code, "silent": false, "store_history": true,
        "user_expressions": {}, "allow_stdin": false,
        // Runs are one at a time, so there is no queue to abort; with it
        // on, ipykernel aborts a request that comes just after an error.
        "stop_on_error": false,
    });
    let id = kernel
        .session
        .shell_request("execute_request", content)
        .await?;
    let (mut idle, mut replied, mut timed_out) = (false, false, false);
    let mut count = ctx.count.load(Ordering::Relaxed);
    let deadline = tokio::time::sleep(timeout);
    tokio::pin!(deadline);
    let mut died = None;
    let (inboxes, signer) = kernel.session.parts();
    while !(idle && replied) {
        tokio::select! {
            m = jupyter::next(&mut inboxes.iopub, signer, "iopub") => {
                let m = match m { Ok(m) => m, Err(e) => { died = Some(e.message().to_string()); break; } };
                if m.parent_id != id {
                    continue;
                }
                let c = &m.content;
                let ev = match m.msg_type.as_str() {
                    "stream" => {
                        let out = pb::CodeOutput { text: c["text"].as_str().unwrap_or_default().to_string() };
                        Some(if c["name"] == "stderr" { Event::Stderr(out) } else { Event::Stdout(out) })
                    }
                    "execute_result" => {
                        if let Some(n) = c["execution_count"].as_i64() { count = n as i32; }
                        Some(Event::Result(result(c, true)))
                    }
                    "display_data" => Some(Event::Result(result(c, false))),
                    "error" => Some(Event::CodeError(pb::CodeError {
                        name: c["ename"].as_str().unwrap_or_default().to_string(),
                        value: c["evalue"].as_str().unwrap_or_default().to_string(),
                        traceback: c["traceback"].as_array().map(|a| {
                            a.iter().filter_map(|t| t.as_str().map(String::from)).collect()
                        }).unwrap_or_default(),
                    })),
                    "status" => {
                        idle |= c["execution_state"] == "idle";
                        None
                    }
                    _ => None,
                };
                if let Some(ev) = ev && !sink.send(ev).await {
                    // The caller went: stop the run, keep the context.
                    let _ = contexts.interrupt(ctx);
                }
            }
            r = jupyter::next(&mut inboxes.shell, signer, "shell") => {
                let r = match r { Ok(r) => r, Err(e) => { died = Some(e.message().to_string()); break; } };
                if r.parent_id == id && r.msg_type == "execute_reply" {
                    replied = true;
                    if r.content["status"] == "aborted" {
                        sink.send(Event::CodeError(pb::CodeError {
                            name: "Aborted".into(),
                            value: "the kernel aborted this run".into(),
                            traceback: vec![],
                        }))
                        .await;
                    }
                    if let Some(n) = r.content["execution_count"].as_i64() { count = n as i32; }
                }
            }
            _ = &mut deadline, if !timed_out => {
                timed_out = true;
                let _ = contexts.interrupt(ctx);
            }
        }
    }
    if died.is_none() && !env.is_empty() {
        // Put back; if the kernel cannot, it is dying, and a new one
        // starts with the context's own environment.
        let _ = kernel
            .session
            .run_silent(&env.python_restore(), START_TIMEOUT)
            .await;
    }
    Ok((count, timed_out, died))
}

fn kernel_dir(ctx: &Context) -> String {
    format!("/tmp/.talon-kernel-{}", ctx.id)
}

fn kernel_gone_by_request(ctx: &Context) -> bool {
    ctx.pid.load(Ordering::Relaxed) == 0
}

/// Kills a context's kernel and everything it started.
fn kill(ctx: &Context) {
    let pid = ctx.pid.swap(0, Ordering::Relaxed);
    if pid != 0 {
        // SAFETY: kill(2) on the process group of a child of ours.
        unsafe { libc::kill(-(pid as i32), libc::SIGKILL) };
    }
}

/// A rich result: every representation as text (JSON ones serialized).
fn result(c: &serde_json::Value, main: bool) -> pb::CodeResult {
    let data = c["data"]
        .as_object()
        .map(|o| {
            o.iter()
                .map(|(k, v)| {
                    let text = match v {
                        serde_json::Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    (k.clone(), text)
                })
                .collect()
        })
        .unwrap_or_default();
    pb::CodeResult {
        data,
        is_main_result: main,
    }
}

async fn exited(p: &Proc) {
    let mut rx = p.subscribe();
    let _ = rx.wait_for(|s| s.exit.is_some()).await;
}

/// The last lines a process wrote.
fn tail(p: &Proc) -> String {
    p.tail_lines(3, |_| false).join(" / ")
}
