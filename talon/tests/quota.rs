//! Quotas and the fair share, against a real server with a test worker
//! on the real worker session.

mod common;
use common::*;
use std::time::Duration;
use talon_proto::v1 as pb;
use tonic::Code;

/// Sets a tenant's quota: (sandboxes, cpu millis, MiB).
async fn set_quota(admin: &mut Clients, tenant_id: &str, q: (i64, i64, i64)) {
    admin
        .tenants
        .update_tenant_quota(pb::UpdateTenantQuotaRequest {
            tenant_id: tenant_id.into(),
            quota: Some(pb::Quota {
                max_sandboxes: q.0,
                max_cpu_millis: q.1,
                max_memory_mib: q.2,
            }),
        })
        .await
        .unwrap();
}

/// A create of that many cpu millis and MiB.
fn sized(cpu_millis: i64, memory_mib: i64, wait: bool) -> pb::CreateSandboxRequest {
    pb::CreateSandboxRequest {
        sandbox: Some(pb::Sandbox {
            resources: Some(pb::Resources {
                cpu_millis,
                memory_mib,
                ..Default::default()
            }),
            ..Default::default()
        }),
        wait_until_running: wait,
        wait_timeout: None,
        ..Default::default()
    }
}

#[tokio::test]
async fn quota_exceeded_is_resource_exhausted() {
    let s = Server::start().await;
    let t = tenant(&s, "small").await;
    let _w = TestWorker::connect(&s, "wrk_q", Behaviour::Obey).await;
    let mut admin = s.admin().await;
    set_quota(&mut admin, &t.tenant_id, (2, 1000, 4096)).await;
    let mut dev = s.as_(&t.developer).await;
    dev.sandboxes
        .create_sandbox(create_req(true, 10))
        .await
        .unwrap();
    dev.sandboxes
        .create_sandbox(create_req(true, 10))
        .await
        .unwrap();
    let third = dev.sandboxes.create_sandbox(create_req(false, 1)).await;
    assert_eq!(code(third), Code::ResourceExhausted);
    // CPU: two sandboxes of 500 already hold the 1000 allowed.
    set_quota(&mut admin, &t.tenant_id, (10, 1000, 4096)).await;
    let err = dev
        .sandboxes
        .create_sandbox(create_req(false, 1))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::ResourceExhausted);
    assert!(err.message().contains("cpu"), "{}", err.message());
    let usage = dev
        .tenants
        .get_tenant(pb::GetTenantRequest {
            tenant_id: "-".into(),
        })
        .await
        .unwrap()
        .into_inner()
        .tenant
        .unwrap()
        .usage
        .unwrap();
    assert_eq!((usage.sandboxes, usage.cpu_millis), (2, 1000));
}

/// Fairness: one tenant could fill a worker within its own quota (16
/// cores by default on a worker of 8), and another tenant's create then
/// failed. Now a tenant holds at most --tenant-max-share (half, by
/// default) of the connected workers' capacity, and the other gets in.
#[tokio::test]
async fn one_tenant_cannot_starve_another_within_its_quota() {
    // By limits, the share caps cpu; by usage (the default), slots only
    // (`the_fair_share_by_usage_caps_slots`).
    let s = Server::start_with(None, &["--placement", "limits"]).await;
    let greedy = tenant(&s, "greedy").await;
    let other = tenant(&s, "other").await;
    // 64 cores, 256 GiB, 100 slots.
    let _w = TestWorker::connect(&s, "wrk_fair", Behaviour::Obey).await;
    let mut admin = s.admin().await;
    set_quota(&mut admin, &greedy.tenant_id, (100, 64_000, 262_144)).await;
    let big = |cores: i64| sized(cores * 1000, 1024, true);
    let mut g = s.as_(&greedy.developer).await;
    let mut stopped = None;
    for _ in 0..4 {
        let sb = g
            .sandboxes
            .create_sandbox(big(8))
            .await
            .unwrap()
            .into_inner();
        stopped = sb.sandbox.map(|s| s.sandbox_id);
    }
    // 32 of 64 cores: the fifth is over the share, though within quota.
    let err = g.sandboxes.create_sandbox(big(8)).await.unwrap_err();
    assert_eq!(err.code(), Code::ResourceExhausted);
    assert!(err.message().contains("fair share"), "{}", err.message());
    // The other tenant still gets its sandboxes.
    let mut o = s.as_(&other.developer).await;
    o.sandboxes.create_sandbox(big(8)).await.unwrap();
    // Starting a stopped one takes capacity again, and is held to it too.
    let id = stopped.unwrap();
    g.sandboxes
        .stop_sandbox(pb::StopSandboxRequest {
            sandbox_id: id.clone(),
        })
        .await
        .unwrap();
    for _ in 0..100 {
        if get(&mut g, &id).await.state == pb::SandboxState::Stopped as i32 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    g.sandboxes.create_sandbox(big(8)).await.unwrap();
    let err = g
        .sandboxes
        .start_sandbox(pb::StartSandboxRequest { sandbox_id: id })
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::ResourceExhausted, "{}", err.message());
    // The platform's own tenant is not held to a share: on two workers
    // (128 cores) it takes 72.
    let _w2 = TestWorker::connect(&s, "wrk_fair2", Behaviour::Obey).await;
    let mut a = s.admin().await;
    set_quota(&mut a, "-", (100, 128_000, 262_144)).await;
    for _ in 0..9 {
        a.sandboxes.create_sandbox(big(8)).await.unwrap();
    }
}

/// Under usage placement (the default), the limits of a tenant's sandboxes
/// say nothing of the room hosts have: its share caps its sandbox slots.
/// Its cpu limits may add up to more than the workers' cpus.
#[tokio::test]
async fn the_fair_share_by_usage_caps_slots() {
    let s = Server::start().await;
    let greedy = tenant(&s, "greedy").await;
    // 64 cores, 256 GiB, 100 slots: half is 50.
    let _w = TestWorker::connect(&s, "wrk_fair_u", Behaviour::Obey).await;
    let mut admin = s.admin().await;
    set_quota(&mut admin, &greedy.tenant_id, (100, 1_000_000, 1_000_000)).await;
    let two_cores = || sized(2000, 512, false);
    let mut g = s.as_(&greedy.developer).await;
    // 50 of them hold 100 cores of limits on a worker of 64.
    for _ in 0..50 {
        g.sandboxes.create_sandbox(two_cores()).await.unwrap();
    }
    let err = g.sandboxes.create_sandbox(two_cores()).await.unwrap_err();
    assert_eq!(err.code(), Code::ResourceExhausted);
    assert!(
        err.message().contains("fair share") && err.message().contains("sandboxes"),
        "{}",
        err.message()
    );
}
