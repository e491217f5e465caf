//! What the agent's tests share: the agent as a real process on a unix
//! socket, and helpers to run processes and move files through it.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Child, Command};
use std::time::Duration;
use talon_proto::talon::agent::v1::sandbox_agent_service_client::SandboxAgentServiceClient;
use talon_proto::v1 as pb;
use tonic::transport::Channel;

pub struct Agent {
    pub child: Child,
    pub dir: tempfile::TempDir,
    pub client: SandboxAgentServiceClient<Channel>,
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Agent {
    pub async fn start() -> Agent {
        Self::start_with(&[]).await
    }

    pub async fn start_with(extra: &[&str]) -> Agent {
        Self::start_env(extra, &[]).await
    }

    pub async fn start_env(extra: &[&str], env: &[(&str, &str)]) -> Agent {
        let dir = tempfile::tempdir().unwrap();
        let sock = dir.path().join("agent.sock");
        std::fs::create_dir_all(dir.path().join("ws")).unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_talon-agent"))
            .arg("--socket")
            .arg(&sock)
            .arg("--log-dir")
            .arg(dir.path().join("logs"))
            .arg("--workspace")
            .arg(dir.path().join("ws"))
            .args(extra)
            .envs(env.iter().copied())
            .spawn()
            .unwrap();
        // The socket file appears at bind, before the agent listens: wait
        // until a connection is accepted, not until the file exists.
        for _ in 0..200 {
            if std::os::unix::net::UnixStream::connect(&sock).is_ok() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let path = sock.clone();
        let channel = tonic::transport::Endpoint::from_static("http://agent")
            .connect_with_connector(tower::service_fn(move |_: http::Uri| {
                let path = path.clone();
                async move {
                    Ok::<_, std::io::Error>(hyper_util::rt::TokioIo::new(
                        tokio::net::UnixStream::connect(path).await?,
                    ))
                }
            }))
            .await
            .unwrap();
        Agent {
            child,
            dir,
            client: SandboxAgentServiceClient::new(channel),
        }
    }

    pub fn ws(&self) -> PathBuf {
        self.dir.path().join("ws")
    }
}

pub fn start(cmd: &[&str]) -> pb::StartProcessRequest {
    pb::StartProcessRequest {
        command: cmd.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    }
}

#[derive(Default, Debug)]
pub struct Run {
    pub pid: u32,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub seqs: Vec<u64>,
    pub exit: Option<pb::ProcessExited>,
}

pub async fn collect<S>(mut s: S) -> Run
where
    S: tokio_stream::Stream<Item = Result<pb::ProcessEvent, tonic::Status>> + Unpin,
{
    use pb::process_event::Event;
    use tokio_stream::StreamExt;
    let mut r = Run::default();
    while let Some(ev) = tokio::time::timeout(Duration::from_secs(20), s.next())
        .await
        .expect("stream stalled")
    {
        match ev.unwrap().event.unwrap() {
            Event::Started(s) => r.pid = s.pid,
            Event::Output(o) => {
                r.seqs.push(o.seq);
                if o.stream == pb::OutputStream::Stderr as i32 {
                    r.stderr.extend(o.data)
                } else {
                    r.stdout.extend(o.data)
                }
            }
            Event::Exited(e) => r.exit = Some(e),
        }
    }
    r
}

pub async fn run(a: &mut Agent, req: pb::StartProcessRequest) -> Run {
    use tokio_stream::StreamExt;
    let s = a.client.start_process(req).await.unwrap().into_inner();
    collect(s.map(|r| r.map(|x| x.event.unwrap()))).await
}

pub async fn write(
    a: &mut Agent,
    path: &str,
    data: &[u8],
    parents: bool,
) -> Result<pb::FileInfo, tonic::Status> {
    use pb::write_file_request::Message as W;
    let mut msgs = vec![pb::WriteFileRequest {
        sandbox_id: String::new(),
        message: Some(W::Header(pb::WriteFileHeader {
            path: path.into(),
            mode: 0,
            create_parents: parents,
            no_overwrite: false,
            ..Default::default()
        })),
    }];
    for c in data.chunks(100_000) {
        msgs.push(pb::WriteFileRequest {
            sandbox_id: String::new(),
            message: Some(W::Data(c.to_vec())),
        });
    }
    msgs.push(pb::WriteFileRequest {
        sandbox_id: String::new(),
        message: Some(W::Finish(pb::WriteFileFinish {
            size: data.len() as i64,
        })),
    });
    a.client
        .write_file(tokio_stream::iter(msgs))
        .await
        .map(|r| r.into_inner().info.unwrap())
}

pub async fn read(a: &mut Agent, path: &str) -> Result<Vec<u8>, tonic::Status> {
    let mut s = a
        .client
        .read_file(pb::ReadFileRequest {
            sandbox_id: String::new(),
            path: path.into(),
            offset: 0,
            length: 0,
            ..Default::default()
        })
        .await?
        .into_inner();
    let mut out = Vec::new();
    while let Some(c) = s.message().await? {
        out.extend(c.data);
    }
    Ok(out)
}
