//! One port, three faces: gRPC reflection lists the services, the health
//! service answers, and a grpc-web request over HTTP/1.1 succeeds.

mod common;
use common::*;
use http_body_util::BodyExt;
use talon_proto::v1 as pb;
use tokio_stream::StreamExt;

#[tokio::test]
async fn reflection_lists_the_services() {
    use tonic_reflection::pb::v1::ServerReflectionRequest;
    use tonic_reflection::pb::v1::server_reflection_client::ServerReflectionClient;
    use tonic_reflection::pb::v1::server_reflection_request::MessageRequest;
    use tonic_reflection::pb::v1::server_reflection_response::MessageResponse;
    let s = Server::start().await;
    let mut c = ServerReflectionClient::new(s.channel().await);
    let req = ServerReflectionRequest {
        host: String::new(),
        message_request: Some(MessageRequest::ListServices(String::new())),
    };
    let mut stream = c
        .server_reflection_info(tokio_stream::iter(vec![req]))
        .await
        .unwrap()
        .into_inner();
    let resp = stream.next().await.unwrap().unwrap();
    let Some(MessageResponse::ListServicesResponse(list)) = resp.message_response else {
        panic!("{resp:?}")
    };
    let names: Vec<String> = list.service.into_iter().map(|s| s.name).collect();
    for want in [
        "talon.v1.SandboxService",
        "talon.v1.AuthService",
        "talon.v1.TenantService",
        "talon.v1.AdminService",
        "grpc.health.v1.Health",
    ] {
        assert!(
            names.iter().any(|n| n == want),
            "{want} missing from {names:?}"
        );
    }
    // The descriptor of a public file comes back with its HTTP options.
    let req = ServerReflectionRequest {
        host: String::new(),
        message_request: Some(MessageRequest::FileContainingSymbol(
            "talon.v1.SandboxService".into(),
        )),
    };
    let mut stream = c
        .server_reflection_info(tokio_stream::iter(vec![req]))
        .await
        .unwrap()
        .into_inner();
    let resp = stream.next().await.unwrap().unwrap();
    let Some(MessageResponse::FileDescriptorResponse(fd)) = resp.message_response else {
        panic!("{resp:?}")
    };
    assert!(
        fd.file_descriptor_proto
            .iter()
            .any(|f| f.windows(13).any(|w| w == b"/v1/sandboxes"))
    );
}

#[tokio::test]
async fn health_is_serving() {
    use tonic_health::pb::HealthCheckRequest;
    use tonic_health::pb::health_client::HealthClient;
    let s = Server::start().await;
    let mut h = HealthClient::new(s.channel().await);
    let r = h
        .check(HealthCheckRequest {
            service: String::new(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        r.status,
        tonic_health::pb::health_check_response::ServingStatus::Serving as i32
    );
}

#[tokio::test]
async fn grpc_web_over_http1() {
    use prost::Message;
    let s = Server::start().await;
    let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build_http::<http_body_util::Full<bytes::Bytes>>();
    // One grpc-web frame: flag 0, length 0 (an empty WhoAmIRequest).
    let body = bytes::Bytes::from_static(&[0, 0, 0, 0, 0]);
    let req = http::Request::post(format!("{}/talon.v1.AuthService/WhoAmI", s.grpc))
        .header("content-type", "application/grpc-web+proto")
        .header("x-grpc-web", "1")
        .header("authorization", format!("Bearer {}", s.boot.api_key))
        .body(http_body_util::Full::new(body))
        .unwrap();
    let resp = client.request(req).await.unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.version(), http::Version::HTTP_11);
    assert!(
        resp.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("application/grpc-web")
    );
    let bytes = resp.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(bytes[0], 0, "first frame is data");
    let len = u32::from_be_bytes(bytes[1..5].try_into().unwrap()) as usize;
    let who = pb::WhoAmIResponse::decode(&bytes[5..5 + len]).unwrap();
    assert_eq!(who.email, "admin@talon.local");
    let trailers = String::from_utf8_lossy(&bytes[5 + len + 5..]);
    assert_eq!(bytes[5 + len], 0x80, "then the trailers frame");
    assert!(trailers.contains("grpc-status:0"), "{trailers}");

    // And without a credential, the same path is refused in grpc-web form.
    let req = http::Request::post(format!("{}/talon.v1.AuthService/WhoAmI", s.grpc))
        .header("content-type", "application/grpc-web+proto")
        .body(http_body_util::Full::new(bytes::Bytes::from_static(&[
            0, 0, 0, 0, 0,
        ])))
        .unwrap();
    let resp = client.request(req).await.unwrap();
    let status = resp
        .headers()
        .get("grpc-status")
        .map(|v| v.to_str().unwrap().to_string());
    let body = resp.into_body().collect().await.unwrap().to_bytes();
    let text = String::from_utf8_lossy(&body);
    assert!(
        status.as_deref() == Some("16") || text.contains("grpc-status:16"),
        "{status:?} {text}"
    );
}
