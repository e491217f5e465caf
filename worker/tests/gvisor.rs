//! Sandboxes at the `gvisor` isolation level: runsc (systrap) runs the
//! same bundle, the agent binds its socket through runsc's gofer, and
//! processes, files (as a user too), pause and delete work as they do
//! in a container.

mod common;
use common::*;
use talon_proto::v1 as pb;

fn gvisor_spec() -> talon_proto::talon::worker::v1::SandboxSpec {
    let mut s = spec("host", (500, 256, 64));
    s.isolation = pb::Isolation::Gvisor as i32;
    s
}

#[tokio::test(flavor = "multi_thread")]
async fn a_gvisor_sandbox_runs_processes_and_files_under_its_own_kernel() {
    let env = TestHost::with_gvisor(Default::default());
    let mut s = create(&env, &gvisor_spec()).await.unwrap();
    // gVisor's kernel answers, not the host's.
    let (out, _, code) = s
        .sh("cat /proc/version; id -u; ls -l / >/dev/null && echo listed")
        .await;
    assert_eq!(code, 0, "{out}");
    let host = std::fs::read_to_string("/proc/version").unwrap();
    let mut lines = out.lines();
    assert_ne!(lines.next().unwrap().trim(), host.trim(), "{out}");
    assert_eq!(lines.next(), Some("0"));
    assert_eq!(lines.next(), Some("listed"));
    // Files through the agent, as root and as the sandbox's user.
    let (out, _, code) = s
        .sh("echo hi > /workspace/a && chown user /workspace && stat -c %U /workspace/a")
        .await;
    assert_eq!((out.as_str(), code), ("root\n", 0));
    let r = s
        .agent
        .read_file(pb::ReadFileRequest {
            path: "a".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .message()
        .await
        .unwrap()
        .unwrap();
    assert_eq!(r.data, b"hi\n");
    let (_, _, code) = sh_as(&mut s.agent, "user", "echo mine > /workspace/b").await;
    assert_eq!(code, 0);
    let (out, _, _) = s.sh("stat -c %U /workspace/b").await;
    assert_eq!(out, "user\n");
    // Pause and resume through runsc.
    s.env.host.pause(&s.id, 1).await.unwrap();
    s.env.host.resume(&s.id, 1).await.unwrap();
    let (out, _, _) = s.sh("echo back").await;
    assert_eq!(out, "back\n");
    // Deleted: nothing of it is left in runsc's state.
    let id = s.id.clone();
    env.host.delete(&id, 1).await.unwrap();
    drop(s);
    let left: Vec<_> = std::fs::read_dir(env.data().join("runsc-state"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(left.is_empty(), "runsc state left: {left:?}");
}

/// A worker without runsc refuses the level, saying so.
#[tokio::test(flavor = "multi_thread")]
async fn a_worker_without_runsc_refuses_gvisor() {
    let env = TestHost::new(Default::default());
    let e = create(&env, &gvisor_spec()).await.err().expect("refused");
    assert!(e.to_string().contains("does not offer gvisor"), "{e:#}");
}
