//! Failover (issue 18): a `talon server` and real `talon worker` processes
//! with short leases. A worker whose host loses power (its process, its
//! sandboxes and its mounts gone at once) is found lost when its lease
//! lapses, and the autopilot moves its sandboxes to a live worker by the
//! same ids at the next generation: with their files on the `shared`
//! backend, with an empty workspace (said in the state message) on the
//! `local` one. The figures printed are test prints; the bench measures.

mod common;
mod failover_support;
use common::*;
use failover_support::*;
use std::time::{Duration, Instant};
use talon_proto::v1 as pb;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sandboxes_of_a_lost_worker_come_back_on_another_with_their_files() {
    let dir = tempfile::tempdir().unwrap();
    let shared = dir.path().join("shared");
    let shared_flag = shared.to_str().unwrap();
    let TwoHosts {
        s,
        mut admin,
        mut a,
        a_id,
        _b,
        b_id,
        sbxs,
    } = two_hosts(10, &["--shared-workspaces", shared_flag]).await;
    assert!(
        sbxs.iter()
            .all(|x| x.worker_id == a_id && x.generation == 1)
    );
    // B holds a sandbox already, so the moved ones get other id ranges
    // there than they had on A: their files must follow (shift_ids).
    let first = create_running(&mut admin).await;
    if first.worker_id != b_id {
        admin
            .admin
            .reassign_sandbox(pb::ReassignSandboxRequest {
                sandbox_id: first.sandbox_id.clone(),
                worker_id: b_id.clone(),
            })
            .await
            .unwrap();
    }
    let mut procs = procs_client(admin.channel.clone(), bearer(&admin.token));
    // A sandbox on A with a volume: the volume moves with it.
    pb::volume_service_client::VolumeServiceClient::with_interceptor(
        admin.channel.clone(),
        bearer(&admin.token),
    )
    .create_volume(pb::CreateVolumeRequest {
        volume: Some(pb::Volume {
            name: "moved".into(),
            size_mib: 32,
            ..Default::default()
        }),
    })
    .await
    .unwrap();
    let vol = create_running_as(
        &mut admin,
        pb::Sandbox {
            volume_mounts: vec![pb::VolumeMount {
                name: "moved".into(),
                path: "/data".into(),
                read_only: false,
            }],
            ..Default::default()
        },
    )
    .await;
    // Moved by hand while it runs: stopped on its worker first, so its
    // disk is never mounted twice, and the disk comes along (the old
    // worker's let-go leaves it: before, that delete could remove it).
    let (_, code) = proc_sh(
        &mut procs,
        &vol.sandbox_id,
        "echo pre > /workspace/pre && sync",
    )
    .await;
    assert_eq!(code, 0);
    if vol.worker_id != a_id {
        admin
            .admin
            .reassign_sandbox(pb::ReassignSandboxRequest {
                sandbox_id: vol.sandbox_id.clone(),
                worker_id: a_id.clone(),
            })
            .await
            .unwrap();
    }
    let on = |w: &str, g: i64, x: &pb::Sandbox| {
        x.worker_id == w && x.generation >= g && x.state == pb::SandboxState::Running as i32
    };
    let before = until(&mut admin, &vol.sandbox_id, |x| on(&a_id, 1, x)).await;
    let (o, code) = proc_sh(&mut procs, &vol.sandbox_id, "cat /workspace/pre").await;
    assert_eq!((o.as_str(), code), ("pre\n", 0), "{before:?}");
    let (_, code) = proc_sh(&mut procs, &vol.sandbox_id, "echo kept > /data/f && sync").await;
    assert_eq!(code, 0);
    for x in &sbxs {
        // A file of the sandbox's unprivileged user (uid 1000 inside).
        let (_, code) = proc_sh(
            &mut procs,
            &x.sandbox_id,
            "mkdir -p /workspace/u && chown 1000:1000 /workspace/u && echo u > /workspace/u/f && chown 1000:1000 /workspace/u/f && sync",
        )
        .await;
        assert_eq!(code, 0);
    }

    power_off(&s, &mut a, "host-a");
    let t0 = Instant::now();
    let back = until_moved(&mut admin, &sbxs, &a_id, t0).await;
    let (p50, max) = p50_max(back);
    let moved = until(&mut admin, &vol.sandbox_id, |x| {
        on(&b_id, before.generation + 1, x)
    })
    .await;
    let (o, code) = proc_sh(&mut procs, &vol.sandbox_id, "cat /data/f").await;
    assert_eq!((o.as_str(), code), ("kept\n", 0), "{moved:?}");
    println!(
        "failover (shared backend, lease 3 s, grace 1 s): {} sandboxes RUNNING again on the other worker, p50 {p50:.1} s, max {max:.1} s after the power-off",
        sbxs.len()
    );
    for x in &sbxs {
        let now = get(&mut admin, &x.sandbox_id).await;
        assert_eq!(now.worker_id, b_id);
        assert_eq!(now.generation, 2, "moved at the next generation");
        assert!(
            now.state_message
                .contains("from its workspace on shared storage"),
            "{}",
            now.state_message
        );
        let (o, code) = proc_sh(&mut procs, &x.sandbox_id, "cat /workspace/mine").await;
        assert_eq!(
            (o.trim(), code),
            (x.sandbox_id.as_str(), 0),
            "its file came along"
        );
        // Under its new id range its files are still its own: root's
        // root's, the user's the user's, and both write them.
        let (o, code) = proc_sh(
            &mut procs,
            &x.sandbox_id,
            "stat -c '%u %g' /workspace/mine /workspace/u/f && echo more >> /workspace/mine && setpriv --reuid=1000 --regid=1000 --clear-groups sh -c 'echo more >> /workspace/u/f' && cat /workspace/u/f",
        )
        .await;
        assert_eq!(
            (o.as_str(), code),
            ("0 0\n1000 1000\nu\nmore\n", 0),
            "{}",
            x.sandbox_id
        );
    }
    assert_eq!(metric(&s, "talon_workers_lost_total").await, Some(1.0));
    assert_eq!(metric(&s, "talon_failover_waves_total").await, Some(1.0));
    // Operators see which worker is lost, since when, and its backend.
    let listed = workers(&mut admin).await;
    let of = |id: &str| listed.iter().find(|w| w.worker_id == id).unwrap().clone();
    let (wa, wb) = (of(&a_id), of(&b_id));
    assert_eq!(wa.state, pb::WorkerState::Lost as i32, "{wa:?}");
    assert!(
        wa.last_lost_time.is_some() && wa.lease_expire_time.is_some(),
        "{wa:?}"
    );
    assert_eq!(wb.state, pb::WorkerState::Active as i32, "{wb:?}");
    assert_eq!(
        (wa.workspace_backend.as_str(), wb.workspace_backend.as_str()),
        ("shared", "shared")
    );
    // The sandboxes with files, and the one with the volume.
    let moved_n = sbxs.len() + 1;
    assert_eq!(
        metric(&s, "talon_failover_sandboxes_moved_total").await,
        Some(moved_n as f64)
    );
    let lost = audited(&mut admin, "autopilot.WorkerLost").await;
    assert_eq!(lost.len(), 1);
    assert_eq!(lost[0].resource_id, a_id);
    assert_eq!(
        audited(&mut admin, "autopilot.MoveSandbox").await.len(),
        moved_n
    );

    // Host A comes back: its old generations are gone from it (the
    // control plane no longer keeps them there), the moved sandboxes and
    // their shared disks are untouched, and for the cooldown nothing new
    // is placed on it.
    let _a = worker(&s, "host-a", &["--shared-workspaces", shared_flag]);
    until_workers(&mut admin, 2).await;
    let fresh = create_running(&mut admin).await;
    assert_eq!(
        fresh.worker_id, b_id,
        "a worker in its cooldown gets nothing"
    );
    for x in &sbxs {
        let (o, code) = proc_sh(&mut procs, &x.sandbox_id, "cat /workspace/mine").await;
        assert_eq!((o, code), (format!("{}\nmore\n", x.sandbox_id), 0));
    }
    // Deleting a moved sandbox removes its shared disk.
    admin
        .sandboxes
        .delete_sandbox(pb::DeleteSandboxRequest {
            sandbox_id: sbxs[0].sandbox_id.clone(),
        })
        .await
        .unwrap();
    assert!(!shared.join(&sbxs[0].sandbox_id).exists());
    assert!(shared.join(&sbxs[1].sandbox_id).join("disk.img").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn on_the_local_backend_a_moved_sandbox_says_its_workspace_was_lost() {
    let TwoHosts {
        s,
        mut admin,
        mut a,
        a_id,
        _b,
        sbxs,
        ..
    } = two_hosts(2, &[]).await;
    power_off(&s, &mut a, "host-a");
    let t0 = Instant::now();
    let back = until_moved(&mut admin, &sbxs, &a_id, t0).await;
    let (p50, max) = p50_max(back);
    println!("failover (local backend): p50 {p50:.1} s, max {max:.1} s");
    let mut procs = procs_client(admin.channel.clone(), bearer(&admin.token));
    for x in &sbxs {
        let now = get(&mut admin, &x.sandbox_id).await;
        assert!(
            now.state_message.contains("local backend) and is lost"),
            "{}",
            now.state_message
        );
        let (_, code) = proc_sh(&mut procs, &x.sandbox_id, "test -e /workspace/mine").await;
        assert_eq!(code, 1, "an empty workspace");
    }
}

/// On the `local` backend, by default, a lost worker's sandboxes are not
/// moved: nothing could start them with their files. They wait for their
/// worker, and when its host is back they start again where they are
/// with their files (a power-off is a reboot to them).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn on_the_local_backend_sandboxes_wait_for_their_worker_by_default() {
    let wait: Vec<&str> = FAST[..FAST.len() - 2].to_vec();
    let TwoHosts {
        s,
        mut admin,
        mut a,
        a_id,
        _b,
        sbxs,
        ..
    } = two_hosts_on(&wait, 2, &[]).await;
    power_off(&s, &mut a, "host-a");
    // Well past its lease and grace period.
    tokio::time::sleep(Duration::from_secs(8)).await;
    let lost = workers(&mut admin)
        .await
        .into_iter()
        .find(|w| w.worker_id == a_id)
        .unwrap();
    assert_eq!(lost.state, pb::WorkerState::Lost as i32, "{lost:?}");
    for x in &sbxs {
        let now = get(&mut admin, &x.sandbox_id).await;
        assert_eq!((now.worker_id.as_str(), now.generation), (a_id.as_str(), 1));
    }
    assert_eq!(
        metric(&s, "talon_failover_sandboxes_moved_total")
            .await
            .unwrap_or(0.0),
        0.0
    );
    // Its host is back: every sandbox runs again there, with its files.
    let _a = worker(&s, "host-a", &[]);
    let mut procs = procs_client(admin.channel.clone(), bearer(&admin.token));
    for x in &sbxs {
        let now = until(&mut admin, &x.sandbox_id, |sb| {
            sb.state == pb::SandboxState::Running as i32
                && sb.state_message.contains("host restarted")
        })
        .await;
        assert_eq!((now.worker_id.as_str(), now.generation), (a_id.as_str(), 1));
        let (o, code) = proc_sh(&mut procs, &x.sandbox_id, "cat /workspace/mine").await;
        assert_eq!((o.trim(), code), (x.sandbox_id.as_str(), 0));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn when_no_worker_has_room_the_move_waits_and_is_audited() {
    let TwoHosts {
        s,
        mut admin,
        mut a,
        a_id,
        _b,
        b_id,
        sbxs,
    } = two_hosts(2, &[]).await;
    // The only other worker takes no new sandboxes.
    admin
        .admin
        .drain_worker(pb::DrainWorkerRequest {
            worker_id: b_id.clone(),
            undrain: false,
        })
        .await
        .unwrap();
    power_off(&s, &mut a, "host-a");
    let mut waited = false;
    for _ in 0..200 {
        if metric(&s, "talon_failover_waiting_sandboxes").await == Some(2.0) {
            waited = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(waited, "the moves wait for room");
    assert_eq!(
        metric(&s, "talon_failover_no_capacity_total").await,
        Some(1.0)
    );
    assert_eq!(audited(&mut admin, "autopilot.NoCapacity").await.len(), 1);
    for x in &sbxs {
        let now = get(&mut admin, &x.sandbox_id).await;
        assert_ne!(
            now.state,
            pb::SandboxState::Failed as i32,
            "not failed: waiting"
        );
        assert_eq!(now.worker_id, a_id);
    }
    // Room again: the moves retried go through.
    admin
        .admin
        .drain_worker(pb::DrainWorkerRequest {
            worker_id: b_id,
            undrain: true,
        })
        .await
        .unwrap();
    until_moved(&mut admin, &sbxs, &a_id, Instant::now()).await;
    assert_eq!(
        metric(&s, "talon_failover_waiting_sandboxes").await,
        Some(0.0)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_partitioned_worker_stops_its_sandboxes_before_they_move() {
    split_a_worker(Split::Partition).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_stopped_worker_has_its_sandboxes_stopped_by_its_fence_keeper() {
    split_a_worker(Split::Pause).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_flapping_worker_causes_one_wave_of_moves() {
    let TwoHosts {
        s,
        mut admin,
        mut a,
        a_id,
        _b,
        sbxs,
        ..
    } = two_hosts(2, &[]).await;
    // Killed and restarted three times within a minute, each time past
    // its lease (its sandboxes' processes outlive it; its fence keeper
    // stops them at the lease's end).
    let t0 = Instant::now();
    for round in 0..3 {
        let _ = a.child.kill();
        let _ = a.child.wait();
        let lost = round as f64 + 1.0;
        for _ in 0..200 {
            if metric(&s, "talon_workers_lost_total").await == Some(lost) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(metric(&s, "talon_workers_lost_total").await, Some(lost));
        if round == 0 {
            until_moved(&mut admin, &sbxs, &a_id, Instant::now()).await;
        }
        // Past the grace period, then back.
        tokio::time::sleep(Duration::from_millis(1500)).await;
        a = worker(&s, "host-a", &[]);
        until_workers(&mut admin, 2).await;
        // In its cooldown it is given nothing to lose again.
        let fresh = create_running(&mut admin).await;
        assert_ne!(fresh.worker_id, a_id);
    }
    println!(
        "flapping: 3 losses in {:.0} s, {} wave(s) of moves",
        t0.elapsed().as_secs_f64(),
        metric(&s, "talon_failover_waves_total")
            .await
            .unwrap_or(0.0)
    );
    assert!(t0.elapsed() < Duration::from_secs(60));
    assert_eq!(metric(&s, "talon_failover_waves_total").await, Some(1.0));
    assert_eq!(
        metric(&s, "talon_failover_sandboxes_moved_total").await,
        Some(sbxs.len() as f64)
    );
    drop(a);
}

/// The topology: two servers on one PostgreSQL, three worker hosts
/// (network namespaces) on shared storage, each worker given both
/// servers. Sandboxes created through A are run, exec'd into and deleted
/// through B; a host's power-off moves its sandboxes with their files;
/// then server A is killed: the workers' sessions and the duties move to
/// B, whose autopilot moves the sandboxes of the next host powered off,
/// and whose timeouts fire.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_servers_and_three_hosts_survive_a_host_then_a_server() {
    let Some((url, pg, name)) = pg_database("hosts").await else {
        return;
    };
    {
        let mut lan = hosts::Lan::new();
        let gw = lan.gateway();
        let flags: Vec<&str> = FAST
            .iter()
            .copied()
            .chain(["--duty-lease-secs", "3"])
            .collect();
        let mut a = Server::start_on(&gw, Some(&url), &flags).await;
        let b = Server::join_on(&a, &url, &gw, &flags).await;
        let shared = a.data_dir().join("shared");
        let shared = shared.to_str().unwrap().to_string();
        let both = format!("{},{}", a.grpc, b.grpc);
        let hosts: Vec<hosts::Host> = (0..3).map(|_| lan.host()).collect();
        let mut workers: Vec<Option<Worker>> = hosts
            .iter()
            .enumerate()
            .map(|(i, h)| {
                let cg = format!("talon-{}", h.netns);
                Some(spawn_worker_on(
                    h,
                    &a,
                    &both,
                    &format!("host-{i}"),
                    &["--shared-workspaces", &shared, "--cgroup-parent", &cg],
                ))
            })
            .collect();
        let mut admin_a = a.admin().await;
        until_workers(&mut admin_a, 3).await;
        let ids: Vec<String> = (0..3)
            .map(|i| {
                std::fs::read_to_string(a.data_dir().join(format!("host-{i}/worker-id")))
                    .unwrap()
                    .trim()
                    .to_string()
            })
            .collect();

        // Any server answers: created through A, used and deleted through B.
        let sbxs = sandboxes_with_files(&mut admin_a, 6).await;
        let mut admin_b = b.as_(&admin_a.token).await;
        // B lists every worker connected, whichever server holds its session.
        until_workers(&mut admin_b, 3).await;
        let mut procs_b = procs_client(b.channel().await, bearer(&admin_a.token));
        for x in &sbxs {
            let (o, code) = proc_sh(&mut procs_b, &x.sandbox_id, "cat /workspace/mine").await;
            assert_eq!((o.trim(), code), (x.sandbox_id.as_str(), 0));
        }
        admin_b
            .sandboxes
            .delete_sandbox(pb::DeleteSandboxRequest {
                sandbox_id: sbxs[5].sandbox_id.clone(),
            })
            .await
            .unwrap();
        let sbxs = &sbxs[..5];

        // A host lost: its sandboxes come back on the others, files and all.
        let lose = |victim: &str| -> usize { ids.iter().position(|w| w == victim).unwrap() };
        let v1 = sbxs[0].worker_id.clone();
        let i1 = lose(&v1);
        power_off(&a, workers[i1].as_mut().unwrap(), &format!("host-{i1}"));
        workers[i1] = None;
        let moved: Vec<pb::Sandbox> = sbxs.iter().filter(|x| x.worker_id == v1).cloned().collect();
        let back = until_moved(&mut admin_b, &moved, &v1, Instant::now()).await;
        let (p50, max) = p50_max(back);
        println!(
            "two servers, three hosts: {} sandboxes of a lost host back in p50 {p50:.1} s, max {max:.1} s",
            moved.len()
        );

        // Server A killed: the clients go on through B — the SDK, given
        // both servers, by retrying a call that failed.
        let sdk = talon_sdk::Client::connect(&both, &admin_a.token)
            .await
            .unwrap();
        for x in sbxs {
            sdk_cat(&sdk, &x.sandbox_id).await.unwrap();
        }
        a.kill9();
        let t0 = Instant::now();
        while leads(&b).await != Some(true) {
            assert!(
                t0.elapsed() < Duration::from_secs(8),
                "B never took the duties"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        println!(
            "two servers, three hosts: the duties moved to B {:.1} s after A was killed",
            t0.elapsed().as_secs_f64()
        );
        until_workers(&mut admin_b, 2).await;
        let mut retried = 0;
        for x in sbxs {
            let (o, code) = proc_sh(&mut procs_b, &x.sandbox_id, "cat /workspace/mine").await;
            assert_eq!(
                (o.trim(), code),
                (x.sandbox_id.as_str(), 0),
                "no sandbox lost"
            );
            let mut tries = 0;
            loop {
                match sdk_cat(&sdk, &x.sandbox_id).await {
                    Ok(()) => break,
                    Err(e) if tries < 5 => {
                        println!("SDK call failed ({e}); retrying");
                        tries += 1;
                        retried += 1;
                        tokio::time::sleep(Duration::from_millis(200)).await;
                    }
                    Err(e) => panic!("the SDK never reached B: {e}"),
                }
            }
        }
        println!(
            "two servers, three hosts: the SDK given both servers reached every sandbox after A was killed ({retried} call(s) retried)"
        );
        // B's autopilot moves the next lost host's sandboxes.
        let now: Vec<pb::Sandbox> = {
            let mut v = Vec::new();
            for x in sbxs {
                v.push(get(&mut admin_b, &x.sandbox_id).await);
            }
            v
        };
        let v2 = now[0].worker_id.clone();
        let i2 = lose(&v2);
        power_off(&a, workers[i2].as_mut().unwrap(), &format!("host-{i2}"));
        workers[i2] = None;
        let moved: Vec<pb::Sandbox> = now.iter().filter(|x| x.worker_id == v2).cloned().collect();
        until_moved(&mut admin_b, &moved, &v2, Instant::now()).await;
        for x in sbxs {
            let (o, code) = proc_sh(&mut procs_b, &x.sandbox_id, "cat /workspace/mine").await;
            assert_eq!((o.trim(), code), (x.sandbox_id.as_str(), 0));
        }
        // And B's timeouts fire.
        let sb = create_with_timeout(&mut admin_b, 1).await;
        until_state(&mut admin_b, &sb.sandbox_id, pb::SandboxState::Paused).await;
        drop(workers);
        drop(b);
        drop(a);
    }
    use sea_orm::ConnectionTrait;
    pg.execute_unprepared(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sandboxes_a_worker_fenced_start_again_without_waiting_for_the_grace_period() {
    let mut lan = hosts::Lan::new();
    // A long grace period: what happens here must not wait for it.
    let mut flags: Vec<&str> = FAST.to_vec();
    let g = flags
        .iter()
        .position(|f| *f == "--failover-grace-secs")
        .unwrap();
    flags[g + 1] = "15";
    let s = Server::start_on(&lan.gateway(), None, &flags).await;
    let shared = s.data_dir().join("shared");
    let shared = shared.to_str().unwrap();
    let mut admin = s.admin().await;
    let ha = lan.host();
    let _a = host_worker(&ha, &s, "host-a", shared);
    let a_id = until_workers(&mut admin, 1).await.remove(0);
    let sbxs = sandboxes_with_files(&mut admin, 2).await;
    let hb = lan.host();
    let _b = host_worker(&hb, &s, "host-b", shared);
    until_workers(&mut admin, 2).await;
    // Cut past A's lease (it stops its sandboxes), healed well within the
    // grace period: A's reports of what it stopped start them again.
    ha.cut();
    let t0 = Instant::now();
    tokio::time::sleep(Duration::from_millis(4500)).await;
    ha.heal();
    let back = until_moved(&mut admin, &sbxs, &a_id, t0).await;
    let (_, max) = p50_max(back);
    println!("fenced sandboxes RUNNING again {max:.1} s after the cut (grace 15 s)");
    assert!(max < 15.0, "they waited for the grace period");
    assert_eq!(metric(&s, "talon_failover_waves_total").await, Some(0.0));
    assert_eq!(
        audited(&mut admin, "autopilot.RestartFenced").await.len(),
        sbxs.len()
    );
    let mut procs = procs_client(admin.channel.clone(), bearer(&admin.token));
    for x in &sbxs {
        let now = get(&mut admin, &x.sandbox_id).await;
        assert_eq!(now.generation, 2);
        let (o, code) = proc_sh(&mut procs, &x.sandbox_id, "cat /workspace/mine").await;
        assert_eq!((o.trim(), code), (x.sandbox_id.as_str(), 0));
    }
}

/// A snapshot on the shared storage: started from on B with A gone, and
/// what was made from it moves to C (new) after the snapshot's deletion.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn on_the_shared_backend_a_snapshot_outlives_the_worker_that_took_it() {
    let dir = tempfile::tempdir().unwrap();
    let shared = dir.path().join("shared");
    let flags = ["--shared-workspaces", shared.to_str().unwrap()];
    let mut h = two_hosts(1, &flags).await;
    let (admin, b_id, src) = (&mut h.admin, h.b_id.clone(), h.sbxs[0].clone());
    assert_eq!(src.worker_id, h.a_id);
    let snap = admin
        .sandboxes
        .create_snapshot(pb::CreateSnapshotRequest {
            sandbox_id: src.sandbox_id.clone(),
            name: "kept".into(),
            memory: false,
        })
        .await
        .unwrap()
        .into_inner()
        .snapshot
        .unwrap();
    power_off(&h.s, &mut h.a, "host-a");
    let from = create_running_as(
        admin,
        pb::Sandbox {
            snapshot_id: snap.snapshot_id.clone(),
            ..Default::default()
        },
    )
    .await;
    assert_eq!(from.worker_id, b_id, "only B is up");
    let mut procs = procs_client(admin.channel.clone(), bearer(&admin.token));
    let (o, code) = proc_sh(
        &mut procs,
        &from.sandbox_id,
        "cat /workspace/mine && echo after > /workspace/after && sync",
    )
    .await;
    assert_eq!((o.trim(), code), (src.sandbox_id.as_str(), 0));
    // Deleted while the worker that took it is away: the copy on the
    // shared storage goes too (B was told), the sandbox keeps its pin.
    admin
        .sandboxes
        .delete_snapshot(pb::DeleteSnapshotRequest {
            snapshot_id: snap.snapshot_id.clone(),
        })
        .await
        .unwrap();
    let refs = std::fs::read_dir(shared.join("images/refs")).unwrap();
    assert_eq!(refs.count(), 0, "the shared record of a deleted snapshot");
    let _c = worker(&h.s, "host-c", &flags);
    let c_id = until_workers(admin, 2)
        .await
        .into_iter()
        .find(|w| *w != b_id)
        .unwrap();
    admin
        .admin
        .reassign_sandbox(pb::ReassignSandboxRequest {
            sandbox_id: from.sandbox_id.clone(),
            worker_id: c_id.clone(),
        })
        .await
        .unwrap();
    until(admin, &from.sandbox_id, |x| {
        x.worker_id == c_id && x.state == pb::SandboxState::Running as i32
    })
    .await;
    let (o, code) = proc_sh(
        &mut procs,
        &from.sandbox_id,
        "cat /workspace/mine /workspace/after",
    )
    .await;
    assert_eq!((o, code), (format!("{}\nafter\n", src.sandbox_id), 0));
}
