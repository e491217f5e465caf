//! Process and file clients of the data-plane services, and a small
//! create request.

use super::*;
use talon_proto::v1 as pb;

pub type Procs = pb::process_service_client::ProcessServiceClient<Authed>;
pub type Fs = pb::filesystem_service_client::FilesystemServiceClient<Authed>;

pub fn procs_client(ch: tonic::transport::Channel, b: Bearer) -> Procs {
    pb::process_service_client::ProcessServiceClient::with_interceptor(ch, b)
}

pub fn files(ch: tonic::transport::Channel, b: Bearer) -> Fs {
    pb::filesystem_service_client::FilesystemServiceClient::with_interceptor(ch, b)
}

pub async fn exec(p: &mut Procs, id: &str, cmd: &[&str]) -> (String, String, i32) {
    let req = pb::StartProcessRequest {
        sandbox_id: id.into(),
        command: cmd.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    };
    let mut s = p.start_process(req).await.unwrap().into_inner();
    let (mut out, mut err, mut code) = (Vec::new(), Vec::new(), None);
    while let Some(m) = tokio::time::timeout(Duration::from_secs(30), s.message())
        .await
        .unwrap()
        .unwrap()
    {
        match m.event.unwrap().event.unwrap() {
            pb::process_event::Event::Output(o) if o.stream == pb::OutputStream::Stderr as i32 => {
                err.extend(o.data)
            }
            pb::process_event::Event::Output(o) => out.extend(o.data),
            pb::process_event::Event::Exited(e) => code = Some(e.exit_code),
            pb::process_event::Event::Started(_) => {}
        }
    }
    (
        String::from_utf8_lossy(&out).into_owned(),
        String::from_utf8_lossy(&err).into_owned(),
        code.expect("no exit"),
    )
}

/// A create request of a small sandbox (500 millicores, 256 MiB).
pub fn create_req(wait: bool, wait_secs: i64) -> pb::CreateSandboxRequest {
    pb::CreateSandboxRequest {
        sandbox: Some(pb::Sandbox {
            labels: [("team".to_string(), "a".to_string())].into(),
            resources: Some(pb::Resources {
                cpu_millis: 500,
                memory_mib: 256,
                ..Default::default()
            }),
            ..Default::default()
        }),
        wait_until_running: wait,
        wait_timeout: Some(prost_types::Duration {
            seconds: wait_secs,
            nanos: 0,
        }),
        ..Default::default()
    }
}
