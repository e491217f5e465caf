//! The prewarm pool through a real `talon up`: PrewarmImage fills the
//! worker's pool (progress streamed per worker), a create of that image
//! and the default resources is served from it (the hit counted on
//! /metrics) and is a working sandbox with its own env; bad requests are
//! refused with nothing pooled; only a platform admin may prewarm.

mod common;

use common::*;
use talon_proto::v1 as pb;

/// A series of the server's `/metrics` (0 before its first sample).
async fn gauge(s: &Server, name: &str) -> f64 {
    metric(s, name).await.unwrap_or(0.0)
}

#[tokio::test(flavor = "multi_thread")]
async fn prewarm_fills_the_pool_and_creates_claim_from_it() {
    ensure_agent_built();
    let s = Server::up_with(&["--prewarm-pool-size", "1", "--max-prewarm-pool-size", "4"]).await;
    let mut admin = s.admin().await;
    until_worker(&mut admin, true).await;
    let t = tenant(&s, "pool").await;
    let images = |key: &str| {
        pb::image_service_client::ImageServiceClient::with_interceptor(
            admin.channel.clone(),
            common::Bearer(Some(format!("Bearer {key}").parse().unwrap())),
        )
    };
    let mut root = images(&s.boot.api_key);

    // Refused, and nothing pooled: too big, unknown image, not an admin.
    for (req, code) in [
        (("host", 5), tonic::Code::InvalidArgument),
        (("host", -1), tonic::Code::InvalidArgument),
        (("no-such-image", 2), tonic::Code::NotFound),
    ] {
        let r = root
            .prewarm_image(pb::PrewarmImageRequest {
                name: req.0.into(),
                pool_size: req.1,
            })
            .await;
        assert_eq!(code_of(r), code, "{req:?}");
    }
    let r = images(&t.owner)
        .prewarm_image(pb::PrewarmImageRequest {
            name: "host".into(),
            pool_size: 2,
        })
        .await;
    assert_eq!(code_of(r), tonic::Code::PermissionDenied);
    assert_eq!(gauge(&s, "sandbox_prewarm_pool_target").await, 0.0);

    let mut st = root
        .prewarm_image(pb::PrewarmImageRequest {
            name: "host".into(),
            pool_size: 3,
        })
        .await
        .unwrap()
        .into_inner();
    let mut phases = Vec::new();
    while let Some(m) = st.message().await.unwrap() {
        phases.push((m.phase.clone(), m.pool_ready, m.message.clone()));
    }
    assert_eq!(phases.len(), 2, "{phases:?}");
    assert_eq!(phases[0].0, "pooling");
    assert_eq!(
        (phases[1].0.as_str(), phases[1].1),
        ("done", 3),
        "{phases:?}"
    );
    for _ in 0..100 {
        if gauge(&s, "sandbox_prewarm_pool_ready").await >= 3.0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(gauge(&s, "sandbox_prewarm_pool_ready").await, 3.0);
    assert_eq!(gauge(&s, "sandbox_prewarm_pool_target").await, 3.0);

    // A create of the image with the default resources claims one.
    let mut dev = s.as_(&t.developer).await;
    let sb = dev
        .sandboxes
        .create_sandbox(pb::CreateSandboxRequest {
            sandbox: Some(pb::Sandbox {
                image: "host".into(),
                env: [("GREETING".to_string(), "hello".to_string())].into(),
                ..Default::default()
            }),
            wait_until_running: true,
            wait_timeout: None,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .sandbox
        .unwrap();
    for _ in 0..100 {
        if gauge(&s, "sandbox_prewarm_hits_total").await >= 1.0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(gauge(&s, "sandbox_prewarm_hits_total").await, 1.0);
    let out = rest_sh(
        &reqwest::Client::new(),
        &t.developer,
        &s.http,
        &sb.sandbox_id,
        "echo $GREETING $TALON_SANDBOX_ID $(hostname)",
    )
    .await;
    assert_eq!(
        ndjson_stdout(&out).trim(),
        format!("hello {0} {0}", sb.sandbox_id)
    );
    dev.sandboxes
        .delete_sandbox(pb::DeleteSandboxRequest {
            sandbox_id: sb.sandbox_id,
        })
        .await
        .unwrap();
}

fn code_of<T>(r: Result<T, tonic::Status>) -> tonic::Code {
    match r {
        Ok(_) => tonic::Code::Ok,
        Err(e) => e.code(),
    }
}
