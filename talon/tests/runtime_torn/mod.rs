//! A container state file torn by a crash. libcontainer rewrites
//! `state.json` in place (truncate, then write), so a `kill -9` of the
//! runtime between the two leaves it empty; the crash test once found a
//! sandbox that could then never be paused, stopped or deleted again
//! ("EOF while parsing" on every command, forever). The runtime now keeps
//! the last complete copy and mends a torn file from it, and a forced
//! delete of a container torn before any copy existed still removes it.

use crate::common::*;
use std::time::Duration;
use talon_proto::v1 as pb;

fn tear(dir: &std::path::Path) {
    // What a kill between libcontainer's truncate and its write leaves.
    std::fs::write(dir.join("state.json"), b"").unwrap();
}

#[tokio::test]
async fn a_state_file_torn_by_a_crash_is_mended_and_never_strands_a_sandbox() {
    assert_eq!(euid(), 0, "this test needs root (CI runs as root)");
    ensure_agent_built();
    let s = Server::up().await;
    let t = tenant(&s, "torn").await;
    let mut dev = s.as_(&t.developer).await;
    let mk = || pb::CreateSandboxRequest {
        sandbox: Some(pb::Sandbox::default()),
        wait_until_running: true,
        wait_timeout: Some(prost_types::Duration {
            seconds: 60,
            nanos: 0,
        }),
        ..Default::default()
    };
    let mut id = None;
    for _ in 0..100 {
        match dev.sandboxes.create_sandbox(mk()).await {
            Ok(r) => {
                id = Some(r.into_inner().sandbox.unwrap().sandbox_id);
                break;
            }
            Err(e) if e.code() == tonic::Code::Unavailable => {
                tokio::time::sleep(Duration::from_millis(50)).await
            }
            Err(e) => panic!("{e:?}"),
        }
    }
    let id = id.expect("no worker came up");
    let rt = s.data_dir().join("worker/runtime-state");
    let dir = rt.join(&id);
    assert!(
        dir.join("state.json.good").exists(),
        "no complete copy was kept after the create"
    );

    // Torn: pause, resume, stop and start all still work.
    tear(&dir);
    let paused = dev
        .sandboxes
        .pause_sandbox(pb::PauseSandboxRequest {
            sandbox_id: id.clone(),
        })
        .await
        .expect("pause over a torn state file")
        .into_inner()
        .sandbox
        .unwrap();
    assert_eq!(paused.state, pb::SandboxState::Paused as i32);
    tear(&dir);
    dev.sandboxes
        .resume_sandbox(pb::ResumeSandboxRequest {
            sandbox_id: id.clone(),
        })
        .await
        .expect("resume over a torn state file");
    let state = std::fs::read_to_string(dir.join("state.json")).unwrap();
    assert!(state.contains("\"status\""), "not mended: {state:?}");

    // Torn with no copy at all (a crash during the create's first save):
    // a forced delete by the runtime still kills it and removes its
    // directory and cgroups.
    tear(&dir);
    std::fs::remove_file(dir.join("state.json.good")).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_talon"))
        .arg("oci")
        .arg("--root")
        .arg(&rt)
        .args(["delete", "--force", &id])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!dir.exists(), "{} left behind", dir.display());
    for ctl in ["memory", "pids", "cpu", "freezer", "unified"] {
        let cg = std::path::Path::new("/sys/fs/cgroup")
            .join(ctl)
            .join("talon")
            .join(&id);
        assert!(!cg.exists(), "{} left behind", cg.display());
    }
    dev.sandboxes
        .delete_sandbox(pb::DeleteSandboxRequest { sandbox_id: id })
        .await
        .unwrap();
}
