//! envd's `filesystem.Filesystem` onto `talon.v1.FilesystemService`.
//! Paths are E2B's: a relative one is under the user's home. The polling
//! watcher that sync Python uses (CreateWatcher, GetWatcherEvents,
//! RemoveWatcher) is a Talon WatchDir stream held here, its events kept
//! until polled; a watcher is bound to the sandbox and token that made it.

use super::connect::{self, ConnectError, Envelopes, named};
use super::pb::filesystem as e;
use super::process::{with_deadline, with_keepalive};
use super::{Ctx, unary_body};
use axum::body::Body;
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use talon_proto::v1 as pb;
use talon_proto::v1::filesystem_service_client::FilesystemServiceClient;
use tonic::Code;

named! {
    e::StatRequest => "filesystem.StatRequest",
    e::StatResponse => "filesystem.StatResponse",
    e::MakeDirRequest => "filesystem.MakeDirRequest",
    e::MakeDirResponse => "filesystem.MakeDirResponse",
    e::MoveRequest => "filesystem.MoveRequest",
    e::MoveResponse => "filesystem.MoveResponse",
    e::ListDirRequest => "filesystem.ListDirRequest",
    e::ListDirResponse => "filesystem.ListDirResponse",
    e::RemoveRequest => "filesystem.RemoveRequest",
    e::RemoveResponse => "filesystem.RemoveResponse",
    e::WatchDirRequest => "filesystem.WatchDirRequest",
    e::WatchDirResponse => "filesystem.WatchDirResponse",
    e::CreateWatcherRequest => "filesystem.CreateWatcherRequest",
    e::CreateWatcherResponse => "filesystem.CreateWatcherResponse",
    e::GetWatcherEventsRequest => "filesystem.GetWatcherEventsRequest",
    e::GetWatcherEventsResponse => "filesystem.GetWatcherEventsResponse",
    e::RemoveWatcherRequest => "filesystem.RemoveWatcherRequest",
    e::RemoveWatcherResponse => "filesystem.RemoveWatcherResponse",
}

fn client(ctx: &Ctx) -> FilesystemServiceClient<tonic::transport::Channel> {
    FilesystemServiceClient::new(ctx.channel())
        .max_decoding_message_size(talon_core::wire::MAX_MESSAGE_BYTES)
}

/// One call of `filesystem.Filesystem/{method}`.
pub async fn call(ctx: Ctx, method: &str, stream: bool, body: Body) -> Response {
    let r = match (method, stream) {
        ("WatchDir", true) => return watch_dir(ctx, body).await,
        ("Stat", false) => stat(&ctx, body).await,
        ("MakeDir", false) => make_dir(&ctx, body).await,
        ("Move", false) => move_path(&ctx, body).await,
        ("ListDir", false) => list_dir(&ctx, body).await,
        ("Remove", false) => remove(&ctx, body).await,
        ("CreateWatcher", false) => create_watcher(&ctx, body).await,
        ("GetWatcherEvents", false) => watcher_events(&ctx, body).await,
        ("RemoveWatcher", false) => remove_watcher(&ctx, body).await,
        (m, _) => Err(ConnectError::new(
            Code::Unimplemented,
            format!("filesystem.Filesystem/{m} is not served in this form"),
        )),
    };
    r.unwrap_or_else(IntoResponse::into_response)
}

/// The name an image's passwd gives the built-in ids; others as numbers.
fn owner_name(id: u32) -> String {
    match id {
        0 => "root".into(),
        1000 => talon_core::e2b_files::DEFAULT_USER.into(),
        n => n.to_string(),
    }
}

/// `ls -l`'s permission string, as Go's `FileMode.String()` writes it.
fn permissions(kind: e::FileType, mode: u32) -> String {
    let mut s = String::with_capacity(10);
    s.push(match kind {
        e::FileType::Directory => 'd',
        e::FileType::Symlink => 'L',
        _ => '-',
    });
    for (i, c) in "rwxrwxrwx".chars().enumerate() {
        s.push(if mode & (1 << (8 - i)) != 0 { c } else { '-' });
    }
    s
}

pub fn entry(f: pb::FileInfo) -> e::EntryInfo {
    let kind = match pb::FileType::try_from(f.r#type) {
        Ok(pb::FileType::File) => e::FileType::File,
        Ok(pb::FileType::Directory) => e::FileType::Directory,
        Ok(pb::FileType::Symlink) => e::FileType::Symlink,
        _ => e::FileType::Unspecified,
    };
    e::EntryInfo {
        name: f.name,
        r#type: kind as i32,
        path: f.path,
        size: f.size,
        mode: f.mode & 0o7777,
        permissions: permissions(kind, f.mode),
        owner: owner_name(f.uid),
        group: owner_name(f.gid),
        modified_time: f.modify_time,
        symlink_target: (!f.symlink_target.is_empty()).then_some(f.symlink_target),
        metadata: Default::default(),
        is_symlink: kind == e::FileType::Symlink,
    }
}

async fn stat_path(ctx: &Ctx, path: &str) -> Result<pb::FileInfo, tonic::Status> {
    Ok(client(ctx)
        .stat(
            ctx.req(pb::StatRequest {
                sandbox_id: ctx.sandbox_id.clone(),
                path: path.to_string(),
                user: ctx.user.clone(),
            })
            .map_err(|e| tonic::Status::unauthenticated(e.message))?,
        )
        .await?
        .into_inner()
        .info
        .unwrap_or_default())
}

async fn stat(ctx: &Ctx, body: Body) -> Result<Response, ConnectError> {
    let r: e::StatRequest = connect::from_json(&unary_body(body).await?)?;
    let info = stat_path(ctx, &ctx.path(&r.path)).await?;
    Ok(connect::unary(&e::StatResponse {
        entry: Some(entry(info)),
    }))
}

/// envd makes the parents, and answers ALREADY_EXISTS for a directory
/// that is there (the SDKs' `make_dir` then returns false).
async fn make_dir(ctx: &Ctx, body: Body) -> Result<Response, ConnectError> {
    let r: e::MakeDirRequest = connect::from_json(&unary_body(body).await?)?;
    let path = ctx.path(&r.path);
    match stat_path(ctx, &path).await {
        Ok(_) => {
            return Err(ConnectError::new(
                Code::AlreadyExists,
                format!("{} already exists", r.path),
            ));
        }
        Err(s) if s.code() == Code::NotFound => {}
        Err(s) => return Err(s.into()),
    }
    let info = client(ctx)
        .make_dir(ctx.req(pb::MakeDirRequest {
            sandbox_id: ctx.sandbox_id.clone(),
            path,
            parents: true,
            mode: 0,
            user: ctx.user.clone(),
        })?)
        .await?
        .into_inner()
        .info
        .unwrap_or_default();
    Ok(connect::unary(&e::MakeDirResponse {
        entry: Some(entry(info)),
    }))
}

async fn move_path(ctx: &Ctx, body: Body) -> Result<Response, ConnectError> {
    let r: e::MoveRequest = connect::from_json(&unary_body(body).await?)?;
    let info = client(ctx)
        .move_path(ctx.req(pb::MovePathRequest {
            sandbox_id: ctx.sandbox_id.clone(),
            source_path: ctx.path(&r.source),
            destination_path: ctx.path(&r.destination),
            overwrite: true,
            user: ctx.user.clone(),
        })?)
        .await?
        .into_inner()
        .info
        .unwrap_or_default();
    Ok(connect::unary(&e::MoveResponse {
        entry: Some(entry(info)),
    }))
}

async fn list_dir(ctx: &Ctx, body: Body) -> Result<Response, ConnectError> {
    let r: e::ListDirRequest = connect::from_json(&unary_body(body).await?)?;
    let depth =
        i32::try_from(r.depth.max(1)).map_err(|_| ConnectError::invalid("depth is too large"))?;
    let entries = client(ctx)
        .list_dir(ctx.req(pb::ListDirRequest {
            sandbox_id: ctx.sandbox_id.clone(),
            path: ctx.path(&r.path),
            depth,
            user: ctx.user.clone(),
        })?)
        .await?
        .into_inner()
        .entries
        .into_iter()
        .map(entry)
        .collect();
    Ok(connect::unary(&e::ListDirResponse { entries }))
}

async fn remove(ctx: &Ctx, body: Body) -> Result<Response, ConnectError> {
    let r: e::RemoveRequest = connect::from_json(&unary_body(body).await?)?;
    client(ctx)
        .remove_path(ctx.req(pb::RemovePathRequest {
            sandbox_id: ctx.sandbox_id.clone(),
            path: ctx.path(&r.path),
            recursive: true,
            user: ctx.user.clone(),
        })?)
        .await?;
    Ok(connect::unary(&e::RemoveResponse {}))
}

/// Opens Talon's watch of `path`; the call returns once it is in place.
async fn open_watch(
    ctx: &Ctx,
    path: &str,
    recursive: bool,
) -> Result<tonic::Streaming<pb::WatchDirResponse>, ConnectError> {
    Ok(client(ctx)
        .watch_dir(ctx.req(pb::WatchDirRequest {
            sandbox_id: ctx.sandbox_id.clone(),
            path: path.to_string(),
            recursive,
            user: ctx.user.clone(),
        })?)
        .await?
        .into_inner())
}

/// E2B's event: its name is relative to the watched directory.
fn event(root: &str, w: pb::WatchDirResponse) -> e::FilesystemEvent {
    let kind = match pb::FileEventType::try_from(w.r#type) {
        Ok(pb::FileEventType::Create) => e::EventType::Create,
        Ok(pb::FileEventType::Write) => e::EventType::Write,
        Ok(pb::FileEventType::Remove) => e::EventType::Remove,
        Ok(pb::FileEventType::Rename) => e::EventType::Rename,
        Ok(pb::FileEventType::Chmod) => e::EventType::Chmod,
        _ => e::EventType::Unspecified,
    };
    let root = root.trim_end_matches('/');
    let name = w
        .path
        .strip_prefix(root)
        .and_then(|p| p.strip_prefix('/'))
        .unwrap_or(&w.path)
        .to_string();
    e::FilesystemEvent {
        name,
        r#type: kind as i32,
        entry: None,
    }
}

fn watch_request(path: String, include_entry: bool) -> Result<String, ConnectError> {
    if include_entry {
        return Err(ConnectError::new(
            Code::Unimplemented,
            "include_entry is not supported by Talon's E2B-compatible API",
        ));
    }
    Ok(path)
}

async fn watch_dir(ctx: Ctx, body: Body) -> Response {
    use e::watch_dir_response::{Event, KeepAlive, StartEvent};
    let r: Result<_, ConnectError> = async {
        let r: e::WatchDirRequest = Envelopes::new(body).single().await?;
        let path = watch_request(ctx.path(&r.path), r.include_entry)?;
        let s = open_watch(&ctx, &path, r.recursive).await?;
        Ok((path, s))
    }
    .await;
    let (root, s) = match r {
        Ok(v) => v,
        Err(err) => return connect::stream_result::<e::WatchDirResponse>(Err(err)),
    };
    let start = futures::stream::iter([Ok(e::WatchDirResponse {
        event: Some(Event::Start(StartEvent {})),
    })]);
    let events = s.map(move |r| {
        r.map(|w| e::WatchDirResponse {
            event: Some(Event::Filesystem(event(&root, w))),
        })
        .map_err(ConnectError::from)
    });
    let all = start.chain(events);
    let all = with_keepalive(all, ctx.keepalive, || e::WatchDirResponse {
        event: Some(Event::Keepalive(KeepAlive {})),
    });
    // `Connect-Timeout-Ms` bounds the stream's life, as in envd.
    connect::server_stream(with_deadline(all, ctx.timeout))
}

/// Polling watchers, kept for sync clients between their polls: their
/// unread events live in this process, so each is bounded (events and
/// bytes, older ones going) and so are their numbers, platform-wide, per
/// tenant and per sandbox, so that no tenant takes every slot.
pub struct Watchers {
    map: Mutex<HashMap<String, Arc<Watcher>>>,
    next: AtomicU64,
    limits: WatcherLimits,
}

/// What the polling watchers may hold.
#[derive(Clone, Copy, Debug)]
pub struct WatcherLimits {
    /// The most watchers held at once.
    pub max: usize,
    /// ... by one tenant's sandboxes.
    pub per_tenant: usize,
    /// ... on one sandbox.
    pub per_sandbox: usize,
    /// The most events one watcher keeps unpolled (older ones go).
    pub max_events: usize,
    /// The most bytes of events one watcher keeps unpolled (older go).
    pub max_bytes: usize,
    /// A watcher not polled for this long is dropped.
    pub idle: Duration,
}

impl Default for WatcherLimits {
    fn default() -> Self {
        WatcherLimits {
            max: 1024,
            per_tenant: 64,
            per_sandbox: 16,
            max_events: 10_000,
            max_bytes: 256 << 10,
            idle: Duration::from_secs(600),
        }
    }
}

/// Unread events, bounded by count and bytes.
#[derive(Default)]
struct Queue {
    events: VecDeque<e::FilesystemEvent>,
    bytes: usize,
}

impl Queue {
    /// An event's bytes, roughly as held: its encoding, and the rest.
    fn size(ev: &e::FilesystemEvent) -> usize {
        prost::Message::encoded_len(ev) + 32
    }

    fn push(&mut self, ev: e::FilesystemEvent, l: &WatcherLimits) {
        self.bytes += Self::size(&ev);
        self.events.push_back(ev);
        while self.events.len() > l.max_events || self.bytes > l.max_bytes {
            match self.events.pop_front() {
                Some(old) => self.bytes -= Self::size(&old),
                None => break,
            }
        }
    }

    /// Every event, the queue's memory given back.
    fn take(&mut self) -> Vec<e::FilesystemEvent> {
        self.bytes = 0;
        std::mem::take(&mut self.events).into()
    }
}

struct Watcher {
    sandbox_id: String,
    /// Its sandbox's tenant (from the token the server took).
    tenant: String,
    token: String,
    events: Mutex<Queue>,
    ended: Mutex<Option<ConnectError>>,
    polled: Mutex<Instant>,
    task: tokio::task::AbortHandle,
}

impl Watchers {
    pub fn new(limits: WatcherLimits) -> Watchers {
        Watchers {
            map: Mutex::new(HashMap::new()),
            next: AtomicU64::new(1),
            limits,
        }
    }

    /// Drops watchers nobody polls any more.
    fn sweep(&self) {
        let mut m = self.map.lock().expect("watchers");
        let before = m.len();
        m.retain(|_, w| {
            let keep = w.polled.lock().expect("watcher").elapsed() < self.limits.idle;
            if !keep {
                w.task.abort();
            }
            keep
        });
        if m.len() < before {
            drop(m);
            give_back();
        }
    }

    /// Refused when a new watcher of `sandbox` (of `tenant`) would pass a
    /// limit, saying which.
    fn room(&self, tenant: &str, sandbox: &str) -> Result<(), ConnectError> {
        let m = self.map.lock().expect("watchers");
        let l = &self.limits;
        let of_tenant = m.values().filter(|w| w.tenant == tenant).count();
        let of_sandbox = m.values().filter(|w| w.sandbox_id == sandbox).count();
        let full = |what: String| Err(ConnectError::new(Code::ResourceExhausted, what));
        if m.len() >= l.max {
            return full(format!("{} watchers are open; remove one first", l.max));
        }
        if of_tenant >= l.per_tenant {
            return full(format!(
                "the tenant has {of_tenant} watchers open, its most (--e2b-watchers-per-tenant); remove one first"
            ));
        }
        if of_sandbox >= l.per_sandbox {
            return full(format!(
                "the sandbox has {of_sandbox} watchers open, its most (--e2b-watchers-per-sandbox); remove one first"
            ));
        }
        Ok(())
    }

    /// A watcher of this sandbox made with this token; another's is not
    /// found.
    fn get(&self, ctx: &Ctx, id: &str) -> Result<Arc<Watcher>, ConnectError> {
        self.map
            .lock()
            .expect("watchers")
            .get(id)
            .filter(|w| w.sandbox_id == ctx.sandbox_id && w.token == ctx.token)
            .cloned()
            .ok_or_else(|| ConnectError::new(Code::NotFound, format!("watcher {id} not found")))
    }
}

async fn create_watcher(ctx: &Ctx, body: Body) -> Result<Response, ConnectError> {
    let r: e::CreateWatcherRequest = connect::from_json(&unary_body(body).await?)?;
    let watchers = &ctx.e.watchers;
    watchers.sweep();
    // The tenant, from the token: the server checks the token before any
    // call (and the watch below) succeeds; unread, it counts as its own.
    let tenant = tenant_of(&ctx.token).unwrap_or_else(|| ctx.token.clone());
    watchers.room(&tenant, &ctx.sandbox_id)?;
    let root = watch_request(ctx.path(&r.path), r.include_entry)?;
    let mut s = open_watch(ctx, &root, r.recursive).await?;
    let id = format!("w{}", watchers.next.fetch_add(1, Ordering::Relaxed));
    let (tx, rx) = tokio::sync::oneshot::channel::<Arc<Watcher>>();
    let limits = watchers.limits;
    let task = tokio::spawn(async move {
        let Ok(w) = rx.await else { return };
        loop {
            match s.message().await {
                Ok(Some(ev)) => {
                    w.events
                        .lock()
                        .expect("watcher")
                        .push(event(&root, ev), &limits);
                }
                Ok(None) => {
                    *w.ended.lock().expect("watcher") =
                        Some(ConnectError::new(Code::Unavailable, "the watch ended"));
                    return;
                }
                Err(st) => {
                    *w.ended.lock().expect("watcher") = Some(st.into());
                    return;
                }
            }
        }
    });
    let w = Arc::new(Watcher {
        sandbox_id: ctx.sandbox_id.clone(),
        tenant,
        token: ctx.token.clone(),
        events: Mutex::new(Queue::default()),
        ended: Mutex::new(None),
        polled: Mutex::new(Instant::now()),
        task: task.abort_handle(),
    });
    {
        // Checked again with the slot taken: two creates at once.
        let mut m = watchers.map.lock().expect("watchers");
        let l = &watchers.limits;
        let over = m.len() >= l.max
            || m.values().filter(|x| x.tenant == w.tenant).count() >= l.per_tenant
            || m.values().filter(|x| x.sandbox_id == w.sandbox_id).count() >= l.per_sandbox;
        if over {
            w.task.abort();
            return Err(ConnectError::new(
                Code::ResourceExhausted,
                "too many watchers open; remove one first",
            ));
        }
        m.insert(id.clone(), w.clone());
    }
    let _ = tx.send(w);
    Ok(connect::unary(&e::CreateWatcherResponse { watcher_id: id }))
}

async fn watcher_events(ctx: &Ctx, body: Body) -> Result<Response, ConnectError> {
    let r: e::GetWatcherEventsRequest = connect::from_json(&unary_body(body).await?)?;
    let w = ctx.e.watchers.get(ctx, &r.watcher_id)?;
    *w.polled.lock().expect("watcher") = Instant::now();
    let events = w.events.lock().expect("watcher").take();
    if events.is_empty()
        && let Some(err) = w.ended.lock().expect("watcher").clone()
    {
        return Err(err);
    }
    Ok(connect::unary(&e::GetWatcherEventsResponse { events }))
}

async fn remove_watcher(ctx: &Ctx, body: Body) -> Result<Response, ConnectError> {
    let r: e::RemoveWatcherRequest = connect::from_json(&unary_body(body).await?)?;
    let watchers = &ctx.e.watchers;
    watchers.get(ctx, &r.watcher_id)?;
    let removed = watchers.map.lock().expect("watchers").remove(&r.watcher_id);
    if let Some(w) = removed {
        w.task.abort();
        drop(w);
        give_back();
    }
    Ok(connect::unary(&e::RemoveWatcherResponse {}))
}

/// The tenant a sandbox token names (`tsb_` and a JWT whose `tid` is the
/// tenant), read without its signature: only after the server took it.
fn tenant_of(token: &str) -> Option<String> {
    use base64::Engine;
    let payload = token.strip_prefix("tsb_")?.split('.').nth(1)?;
    let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload)
        .ok()?;
    let v: serde_json::Value = serde_json::from_slice(&raw).ok()?;
    Some(v.get("tid")?.as_str()?.to_string())
}

/// Returns freed heap to the system: a removed watcher's queue may have
/// been large, and glibc keeps freed memory otherwise.
fn give_back() {
    #[cfg(target_env = "gnu")]
    // SAFETY: malloc_trim only releases free memory at the heap's top
    // and in free chunks; it touches nothing in use.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_read_like_envds() {
        let f = pb::FileInfo {
            path: "/home/user/d".into(),
            name: "d".into(),
            r#type: pb::FileType::Directory as i32,
            size: 4096,
            mode: 0o40755,
            uid: 1000,
            gid: 1000,
            ..Default::default()
        };
        let en = entry(f);
        assert_eq!(en.r#type, e::FileType::Directory as i32);
        assert_eq!(en.permissions, "drwxr-xr-x");
        assert_eq!(en.mode, 0o755);
        assert_eq!((en.owner.as_str(), en.group.as_str()), ("user", "user"));
        let ev = event(
            "/home/user/",
            pb::WatchDirResponse {
                r#type: pb::FileEventType::Create as i32,
                path: "/home/user/a/b.txt".into(),
                event_time: None,
            },
        );
        assert_eq!(ev.name, "a/b.txt");
        assert_eq!(ev.r#type, e::EventType::Create as i32);
    }

    #[test]
    fn a_queue_keeps_its_newest_events_within_its_bytes() {
        let ev = |i: usize| e::FilesystemEvent {
            name: format!("{i:0100}"),
            r#type: e::EventType::Create as i32,
            ..Default::default()
        };
        let one = Queue::size(&ev(0));
        assert!(one > 132, "{one}");
        let l = WatcherLimits {
            max_events: 100,
            max_bytes: 10 * one,
            ..Default::default()
        };
        let mut q = Queue::default();
        for i in 0..50 {
            q.push(ev(i), &l);
        }
        assert_eq!((q.events.len(), q.bytes), (10, 10 * one));
        let got = q.take();
        assert_eq!(got[0].name, format!("{:0100}", 40));
        assert_eq!((q.events.len(), q.bytes), (0, 0));
    }

    #[test]
    fn the_tenant_is_read_from_a_sandbox_token() {
        use base64::Engine;
        let b = |s: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s);
        let t = format!(
            "tsb_{}.{}.sig",
            b("{}"),
            b(r#"{"sub":"sbx_a","tid":"ten_b"}"#)
        );
        assert_eq!(tenant_of(&t).as_deref(), Some("ten_b"));
        assert_eq!(tenant_of("tsb_x"), None);
        assert_eq!(tenant_of("other"), None);
    }
}
