//! The role matrix: every RPC of the access table, called by owner,
//! developer and viewer (and a platform admin), is refused with
//! PERMISSION_DENIED exactly where the table says. Calls go out raw (an
//! empty request message) so that one loop covers unary and streaming RPCs.

mod common;
use common::*;
use talon_server::auth::Role;
use talon_server::rbac::{Access, METHODS};
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::{Code, Status};

#[derive(Clone, Default)]
struct Raw;
impl Codec for Raw {
    type Encode = Vec<u8>;
    type Decode = Vec<u8>;
    type Encoder = Raw;
    type Decoder = Raw;
    fn encoder(&mut self) -> Raw {
        Raw
    }
    fn decoder(&mut self) -> Raw {
        Raw
    }
}
impl Encoder for Raw {
    type Item = Vec<u8>;
    type Error = Status;
    fn encode(&mut self, item: Vec<u8>, buf: &mut EncodeBuf<'_>) -> Result<(), Status> {
        bytes::BufMut::put_slice(buf, &item);
        Ok(())
    }
}
impl Decoder for Raw {
    type Item = Vec<u8>;
    type Error = Status;
    fn decode(&mut self, buf: &mut DecodeBuf<'_>) -> Result<Option<Vec<u8>>, Status> {
        let n = bytes::Buf::remaining(buf);
        Ok(Some(bytes::Buf::copy_to_bytes(buf, n).to_vec()))
    }
}

async fn call(s: &Server, token: &str, method: &'static str) -> Code {
    let ch = s.channel().await;
    let svc = tonic::service::interceptor::InterceptedService::new(
        ch,
        Bearer(Some(format!("Bearer {token}").parse().unwrap())),
    );
    let mut grpc = tonic::client::Grpc::new(svc);
    grpc.ready().await.unwrap();
    let req = tonic::Request::new(tokio_stream::iter(vec![Vec::<u8>::new()]));
    let path = http::uri::PathAndQuery::from_static(method);
    let fut = grpc.streaming(req, path, Raw);
    match tokio::time::timeout(std::time::Duration::from_secs(10), fut).await {
        Ok(Ok(mut resp)) => match tokio::time::timeout(
            std::time::Duration::from_millis(300),
            resp.get_mut().message(),
        )
        .await
        {
            Ok(Err(st)) => st.code(),
            _ => Code::Ok,
        },
        Ok(Err(st)) => st.code(),
        Err(_) => panic!("{method} did not answer"),
    }
}

#[tokio::test]
async fn every_method_is_allowed_or_denied_as_the_table_says() {
    let s = Server::start().await;
    let t = tenant(&s, "matrix").await;
    let callers: [(&str, &str, Option<Role>, bool); 4] = [
        ("owner", &t.owner, Some(Role::Owner), false),
        ("developer", &t.developer, Some(Role::Developer), false),
        ("viewer", &t.viewer, Some(Role::Viewer), false),
        ("platform admin", &s.boot.api_key, Some(Role::Owner), true),
    ];
    let mut checked = 0;
    for rule in METHODS.iter().filter(|r| r.access != Access::Public) {
        for (who, token, role, padmin) in &callers {
            let expect_allowed = match rule.access {
                Access::Public => true,
                Access::Worker | Access::Peer => false,
                Access::PlatformAdmin => *padmin,
                Access::Role(r) | Access::RoleOrPreviewToken(r) | Access::RoleOrFileToken(r) => {
                    role.unwrap().at_least(r)
                }
            };
            let got = call(&s, token, rule.method).await;
            assert_ne!(got, Code::Unauthenticated, "{who} on {}", rule.method);
            if expect_allowed {
                assert_ne!(
                    got,
                    Code::PermissionDenied,
                    "{who} should be allowed {}",
                    rule.method
                );
            } else {
                assert_eq!(
                    got,
                    Code::PermissionDenied,
                    "{who} should be denied {}",
                    rule.method
                );
            }
            checked += 1;
        }
    }
    assert!(checked > 200, "only {checked} cells");
}

/// Spot checks written out by hand, so the matrix is not only the table
/// agreeing with itself.
#[tokio::test]
async fn known_cells() {
    let s = Server::start().await;
    let t = tenant(&s, "cells").await;
    assert_eq!(
        call(&s, &t.viewer, "/talon.v1.SandboxService/CreateSandbox").await,
        Code::PermissionDenied
    );
    assert_eq!(
        call(&s, &t.developer, "/talon.v1.TenantService/CreateUser").await,
        Code::PermissionDenied
    );
    assert_eq!(
        call(&s, &t.owner, "/talon.v1.AdminService/ListWorkers").await,
        Code::PermissionDenied
    );
    assert_eq!(
        call(&s, &t.owner, "/talon.v1.TenantService/CreateTenant").await,
        Code::PermissionDenied
    );
    assert_eq!(
        call(
            &s,
            &s.boot.api_key,
            "/talon.worker.v1.WorkerControlService/Session"
        )
        .await,
        Code::PermissionDenied
    );
    assert_eq!(
        call(
            &s,
            &s.worker_token(),
            "/talon.v1.SandboxService/ListSandboxes"
        )
        .await,
        Code::PermissionDenied
    );
    assert_eq!(
        call(&s, &t.viewer, "/talon.v1.SandboxService/ListSandboxes").await,
        Code::Ok
    );
    assert_eq!(
        call(&s, &t.owner, "/talon.v1.NoSuchService/Nope").await,
        Code::PermissionDenied
    );
}

/// Mutating calls are audited, the refused ones too.
#[tokio::test]
async fn mutating_calls_are_audited() {
    use talon_proto::v1 as pb;
    let s = Server::start().await;
    let t = tenant(&s, "audited").await;
    assert_eq!(
        call(&s, &t.viewer, "/talon.v1.SandboxService/CreateSandbox").await,
        Code::PermissionDenied
    );
    let mut owner = s.as_(&t.owner).await;
    let ev = owner
        .admin
        .list_audit_events(pb::ListAuditEventsRequest {
            page_size: 500,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .audit_events;
    assert!(
        ev.iter().all(|e| e.tenant_id == t.tenant_id),
        "owners see only their tenant"
    );
    assert!(
        ev.iter()
            .any(|e| e.method == "/talon.v1.SandboxService/CreateSandbox"
                && e.outcome == "PERMISSION_DENIED")
    );
    assert!(
        ev.iter()
            .any(|e| e.method == "/talon.v1.TenantService/CreateUser"
                && e.outcome == "OK"
                && e.resource_id.starts_with("usr_"))
    );
    assert!(
        ev.iter()
            .any(|e| e.method == "/talon.v1.TenantService/CreateApiKey" && e.outcome == "OK")
    );
}
