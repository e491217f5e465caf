//! Crash consistency (issue 29): `kill -9` of the worker or the server at
//! random points of a mixed workload (create, write, pause, resume, stop,
//! start, delete, snapshot), thirty times, each followed by a restart and
//! a check: no sandbox left in a transitional state, none FAILED, every
//! acknowledged change in place (state, files, deletes), and nothing
//! orphaned on the host (no container, mount or sandbox directory the
//! control plane does not keep, no loop device on a disk nobody mounts).
//! It prints how many kills hit each operation. Needs root (CI is root).

mod common;
use common::*;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use talon_proto::v1 as pb;

const KILLS: usize = 30;
/// Sandboxes kept alive at most: each check reads every one.
const MOST: usize = 4;

/// A small PRNG (xorshift), seeded from the clock and printed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// What the test expects of one sandbox, from acknowledged calls only.
#[derive(Clone, Debug, Default)]
struct Expect {
    /// RUNNING, PAUSED or STOPPED, as last acknowledged (None: unknown,
    /// a change was cut short: either state will do).
    state: Option<pb::SandboxState>,
    /// Files acknowledged written: name to content.
    files: BTreeMap<String, String>,
    deleted: bool,
}

type Book = Arc<Mutex<BTreeMap<String, Expect>>>;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Op {
    Create,
    Write,
    Pause,
    Resume,
    Stop,
    Start,
    Delete,
    Snapshot,
}

const OPS: [Op; 8] = [
    Op::Create,
    Op::Write,
    Op::Pause,
    Op::Resume,
    Op::Stop,
    Op::Start,
    Op::Delete,
    Op::Snapshot,
];

fn small() -> pb::Sandbox {
    pb::Sandbox {
        resources: Some(pb::Resources {
            cpu_millis: 100,
            memory_mib: 64,
            max_pids: 64,
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// One operation on the book's sandboxes (or a new one); what it changes
/// is written to the book only once acknowledged. Before the call, what a
/// cut-short call may have changed is marked unknown.
async fn operate(c: &mut Clients, book: &Book, op: Op, pick: u64, n: u64) -> Result<(), String> {
    let e = |s: tonic::Status| s.to_string();
    let live: Vec<(String, Expect)> = book
        .lock()
        .unwrap()
        .iter()
        .filter(|(_, x)| !x.deleted)
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let target = (!live.is_empty()).then(|| live[pick as usize % live.len()].clone());
    let set = |id: &str, f: &dyn Fn(&mut Expect)| {
        f(book.lock().unwrap().entry(id.to_string()).or_default());
    };
    match (op, target) {
        (Op::Create, _) if live.len() < MOST => {
            let sb = c
                .sandboxes
                .create_sandbox(pb::CreateSandboxRequest {
                    sandbox: Some(small()),
                    wait_until_running: true,
                    ..Default::default()
                })
                .await
                .map_err(e)?
                .into_inner()
                .sandbox
                .unwrap();
            set(&sb.sandbox_id, &|x| {
                x.state = Some(pb::SandboxState::Running)
            });
        }
        (Op::Write, Some((id, x))) if x.state == Some(pb::SandboxState::Running) => {
            let mut procs = procs_client(c.channel.clone(), bearer(&c.token));
            let (name, body) = (format!("f{n}"), format!("written {n}"));
            let (o, code) = proc_sh(
                &mut procs,
                &id,
                &format!("echo '{body}' > /workspace/{name}.tmp && sync && mv /workspace/{name}.tmp /workspace/{name} && sync"),
            )
            .await;
            if code != 0 {
                return Err(o);
            }
            set(&id, &|x| {
                x.files.insert(name.clone(), body.clone());
            });
        }
        (Op::Pause | Op::Resume | Op::Stop | Op::Start | Op::Delete, Some((id, _))) => {
            set(&id, &|x| x.state = None);
            let r = match op {
                Op::Pause => c
                    .sandboxes
                    .pause_sandbox(pb::PauseSandboxRequest {
                        sandbox_id: id.clone(),
                    })
                    .await
                    .map(|_| Some(pb::SandboxState::Paused)),
                Op::Resume => c
                    .sandboxes
                    .resume_sandbox(pb::ResumeSandboxRequest {
                        sandbox_id: id.clone(),
                    })
                    .await
                    .map(|_| Some(pb::SandboxState::Running)),
                Op::Stop => c
                    .sandboxes
                    .stop_sandbox(pb::StopSandboxRequest {
                        sandbox_id: id.clone(),
                    })
                    .await
                    .map(|_| Some(pb::SandboxState::Stopped)),
                Op::Start => c
                    .sandboxes
                    .start_sandbox(pb::StartSandboxRequest {
                        sandbox_id: id.clone(),
                    })
                    .await
                    .map(|_| None),
                _ => c
                    .sandboxes
                    .delete_sandbox(pb::DeleteSandboxRequest {
                        sandbox_id: id.clone(),
                    })
                    .await
                    .map(|_| None),
            };
            match r {
                Ok(state) => set(&id, &|x| {
                    x.state = state;
                    x.deleted |= op == Op::Delete;
                }),
                Err(s) if s.code() == tonic::Code::FailedPrecondition => {
                    // Not from this state: nothing changed.
                    let now = get(c, &id).await;
                    set(&id, &|x| {
                        x.state = pb::SandboxState::try_from(now.state).ok()
                    });
                }
                Err(s) => return Err(s.to_string()),
            }
        }
        (Op::Snapshot, Some((id, x))) if x.state == Some(pb::SandboxState::Running) => {
            let snap = c
                .sandboxes
                .create_snapshot(pb::CreateSnapshotRequest {
                    sandbox_id: id,
                    ..Default::default()
                })
                .await
                .map_err(e)?
                .into_inner()
                .snapshot
                .unwrap();
            c.sandboxes
                .delete_snapshot(pb::DeleteSnapshotRequest {
                    snapshot_id: snap.snapshot_id,
                })
                .await
                .map_err(e)?;
        }
        _ => {}
    }
    Ok(())
}

/// Until every sandbox of the book has left its transitional states.
async fn quiet(c: &mut Clients, book: &Book) -> Vec<pb::Sandbox> {
    let ids: Vec<String> = book.lock().unwrap().keys().cloned().collect();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let mut all = Vec::new();
        for id in &ids {
            all.push(get(c, id).await);
        }
        let busy: Vec<_> = all
            .iter()
            .filter(|s| {
                [
                    pb::SandboxState::Pending,
                    pb::SandboxState::Starting,
                    pb::SandboxState::Stopping,
                ]
                .contains(&pb::SandboxState::try_from(s.state).unwrap())
            })
            .collect();
        if busy.is_empty() {
            return all;
        }
        assert!(Instant::now() < deadline, "stuck in a transition: {busy:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Sandboxes the control plane keeps that the book does not know (a
/// create cut short may have made one): followed from now on, in whatever
/// state they settle.
async fn adopt_unknown(c: &mut Clients, book: &Book) {
    let listed = c
        .sandboxes
        .list_sandboxes(pb::ListSandboxesRequest {
            page_size: 500,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .sandboxes;
    let mut b = book.lock().unwrap();
    for sb in listed {
        b.entry(sb.sandbox_id).or_default();
    }
}

/// The invariants, after a restart: see the module doc.
async fn check(s: &Server, c: &mut Clients, book: &Book, round: usize) {
    adopt_unknown(c, book).await;
    let now = quiet(c, book).await;
    let expect = book.lock().unwrap().clone();
    let mut procs = procs_client(c.channel.clone(), bearer(&c.token));
    let mut kept = HashSet::new();
    for sb in &now {
        let x = &expect[&sb.sandbox_id];
        let state = pb::SandboxState::try_from(sb.state).unwrap();
        assert_ne!(state, pb::SandboxState::Failed, "round {round}: {sb:?}");
        if x.deleted {
            assert_eq!(state, pb::SandboxState::Deleted, "round {round}: {sb:?}");
            continue;
        }
        kept.insert(sb.sandbox_id.clone());
        if let Some(want) = x.state {
            assert_eq!(state, want, "round {round}: {sb:?}");
        }
        if state == pb::SandboxState::Running {
            for (name, body) in &x.files {
                let (o, code) = proc_sh(
                    &mut procs,
                    &sb.sandbox_id,
                    &format!("cat /workspace/{name}"),
                )
                .await;
                assert_eq!(
                    (o.trim(), code),
                    (body.as_str(), 0),
                    "round {round}: {name} of {}",
                    sb.sandbox_id
                );
            }
        }
    }
    // Nothing on the host that the control plane does not keep, once the
    // worker has carried out what its registration told it (a delete it
    // missed, say).
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let found = strays(s, &now, &kept);
        if found.is_empty() {
            break;
        }
        assert!(Instant::now() < deadline, "round {round}: {found:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// What is on the host that the control plane does not keep: sandbox
/// directories, containers, mounts and loop devices.
fn strays(s: &Server, now: &[pb::Sandbox], kept: &HashSet<String>) -> Vec<String> {
    let mut out = Vec::new();
    let w = s.data_dir().join("w");
    let names = |d: std::path::PathBuf| -> HashSet<String> {
        std::fs::read_dir(d)
            .map(|d| {
                d.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default()
    };
    for d in names(w.join("sandboxes")).difference(kept) {
        out.push(format!("sandbox directory {d}"));
    }
    let running: HashSet<String> = now
        .iter()
        .filter(|sb| {
            [
                pb::SandboxState::Running as i32,
                pb::SandboxState::Paused as i32,
            ]
            .contains(&sb.state)
        })
        .map(|sb| sb.sandbox_id.clone())
        .collect();
    for c in names(w.join("runtime-state")).difference(&running) {
        out.push(format!("container {c}"));
    }
    let root = w.join("sandboxes");
    for m in talon_worker::rootfs::mounts_under(&root) {
        let id = m.strip_prefix(&root).unwrap().components().next().unwrap();
        if !running.contains(&*id.as_os_str().to_string_lossy()) {
            out.push(format!("mount {}", m.display()));
        }
    }
    let losetup = std::process::Command::new("losetup")
        .args(["--list", "--noheadings", "--output", "BACK-FILE"])
        .output()
        .unwrap();
    for back in String::from_utf8_lossy(&losetup.stdout).lines() {
        let back = back.trim().trim_end_matches(" (deleted)");
        if let Ok(rest) = std::path::Path::new(back).strip_prefix(&root) {
            let id = rest
                .components()
                .next()
                .unwrap()
                .as_os_str()
                .to_string_lossy();
            if !running.contains(&*id) {
                out.push(format!("loop device on {back}"));
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn kill_9_at_random_points_leaves_everything_consistent() {
    assert_eq!(euid(), 0, "needs root (CI is root)");
    ensure_agent_built();
    // TALON_CRASH_SEED replays a printed seed's choices (not its timing).
    let seed = match std::env::var("TALON_CRASH_SEED") {
        Ok(s) => s.parse().expect("TALON_CRASH_SEED: a number"),
        Err(_) => {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
                | 1
        }
    };
    println!("crash loop seed {seed}");
    let mut rng = Rng(seed);
    let mut s = Server::start().await;
    let mut admin = s.admin().await;
    let mut worker = spawn_worker(&s);
    until_worker(&mut admin, true).await;
    let book: Book = Default::default();
    // A population to work on (acknowledged creates).
    for n in 0..3 {
        operate(&mut admin, &book, Op::Create, 0, 1000 + n)
            .await
            .unwrap();
    }
    let mut hits: HashMap<(Op, &'static str), usize> = HashMap::new();
    for round in 0..KILLS {
        let kill_worker = rng.below(2) == 0;
        let what = if kill_worker { "worker" } else { "server" };
        // Operations until one is still under way a random moment after
        // it began: the kill lands in it.
        let mut cut = None;
        for attempt in 0..40u64 {
            let op = OPS[rng.below(OPS.len() as u64) as usize];
            let (pick, delay) = (rng.next(), rng.below(150));
            let mut c = s.admin().await;
            let b = book.clone();
            let n = round as u64 * 100 + attempt;
            let task = tokio::spawn(async move { operate(&mut c, &b, op, pick, n).await });
            tokio::time::sleep(Duration::from_millis(delay)).await;
            if task.is_finished() {
                let _ = task.await;
                continue;
            }
            cut = Some((op, task));
            break;
        }
        if kill_worker {
            let _ = worker.child.kill();
            let _ = worker.child.wait();
            worker = spawn_worker(&s);
        } else {
            s.kill9();
            s.start_again().await;
        }
        // The operation ends with the crash or in spite of it.
        let result = match cut {
            Some((op, task)) => {
                *hits.entry((op, what)).or_default() += 1;
                let r = tokio::time::timeout(Duration::from_secs(120), task).await;
                format!("during {op:?}: {r:?}")
            }
            None => "between operations".to_string(),
        };
        admin = s.admin().await;
        until_worker(&mut admin, true).await;
        println!("round {round}: kill -9 of the {what} {result}");
        check(&s, &mut admin, &book, round).await;
    }
    let mut table: Vec<_> = hits.into_iter().collect();
    table.sort();
    println!("kills that cut an operation short: {table:?}");
    drop(worker);
}
