//! Agent runs: a coding agent started in the sandbox with a prompt on its
//! stdin; its events (output lines, workspace changes, completion) come
//! back numbered, and a run outlives the stream: `follow` reattaches
//! after the last event seen when the stream drops.

use super::*;
use std::collections::HashMap;
use std::time::Duration;
use talon_proto::v1 as pb;

/// A file change's kind as a word: "create", "write", "remove", …
pub fn change_kind(kind: i32) -> String {
    pb::FileEventType::try_from(kind)
        .map(|k| {
            k.as_str_name()
                .trim_start_matches("FILE_EVENT_TYPE_")
                .to_lowercase()
        })
        .unwrap_or_default()
}

#[derive(Clone, Debug, Default)]
pub struct AgentOptions {
    /// Written to the agent's stdin, which is then closed.
    pub prompt: String,
    pub envs: HashMap<String, String>,
    pub cwd: Option<String>,
    pub user: Option<String>,
    /// Names of tenant secrets it gets as environment variables (their
    /// values are redacted from every event).
    pub secrets: Vec<String>,
    /// 30 minutes when None.
    pub timeout: Option<Duration>,
}

/// A run's events, in order; `next` reattaches by itself (up to three
/// times in a row) when the connection drops before the run completes.
pub struct AgentRun {
    agents: pb::agent_service_client::AgentServiceClient<Svc>,
    sandbox_id: String,
    pub run_id: String,
    last_seq: u64,
    done: bool,
    stream: Option<tonic::Streaming<pb::ConnectAgentRunResponse>>,
    first: Option<tonic::Streaming<pb::RunAgentResponse>>,
}

impl AgentRun {
    /// The next event; None once `completed` has been read.
    pub async fn next(&mut self) -> Result<Option<pb::RunAgentResponse>> {
        let mut retries = 0;
        loop {
            if self.done {
                return Ok(None);
            }
            let got = if let Some(s) = self.first.as_mut() {
                s.message().await
            } else if let Some(s) = self.stream.as_mut() {
                s.message().await.map(|m| m.and_then(|m| m.event))
            } else {
                Ok(None)
            };
            match got {
                Ok(Some(e)) => {
                    if e.seq != 0 && e.seq <= self.last_seq {
                        continue;
                    }
                    self.last_seq = e.seq;
                    use pb::run_agent_response::Event;
                    match &e.event {
                        Some(Event::Started(s)) => self.run_id = s.run_id.clone(),
                        Some(Event::Completed(_)) => self.done = true,
                        _ => {}
                    }
                    return Ok(Some(e));
                }
                // The stream ended or broke before completion: reattach.
                Ok(None) | Err(_) if !self.run_id.is_empty() && retries < 3 => {
                    retries += 1;
                    self.first = None;
                    let s = self
                        .agents
                        .connect_agent_run(pb::ConnectAgentRunRequest {
                            sandbox_id: self.sandbox_id.clone(),
                            run_id: self.run_id.clone(),
                            after_seq: self.last_seq,
                        })
                        .await?
                        .into_inner();
                    self.stream = Some(s);
                }
                Ok(None) => return Ok(None),
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Reads the run to its end: every event, the last one `completed`.
    pub async fn collect(mut self) -> Result<Vec<pb::RunAgentResponse>> {
        let mut all = vec![];
        while let Some(e) = self.next().await? {
            all.push(e);
        }
        Ok(all)
    }
}

pub struct Agent<'a> {
    pub(crate) s: &'a Sandbox,
}

impl Agent<'_> {
    fn client(&self) -> pb::agent_service_client::AgentServiceClient<Svc> {
        self.s.client().agents()
    }

    /// Starts `command` with the options' prompt on its stdin.
    pub async fn run(&self, command: Vec<String>, o: AgentOptions) -> Result<AgentRun> {
        let mut agents = self.client();
        let first = agents
            .run_agent(pb::RunAgentRequest {
                sandbox_id: self.s.id().into(),
                command,
                prompt: o.prompt,
                env: o.envs,
                cwd: o.cwd.unwrap_or_default(),
                timeout: o.timeout.map(duration),
                secret_names: o.secrets,
                user: o.user.unwrap_or_default(),
            })
            .await?
            .into_inner();
        Ok(AgentRun {
            agents,
            sandbox_id: self.s.id().into(),
            run_id: String::new(),
            last_seq: 0,
            done: false,
            stream: None,
            first: Some(first),
        })
    }

    /// Follows a run by id from after `after_seq`.
    pub async fn connect(&self, run_id: &str, after_seq: u64) -> Result<AgentRun> {
        let mut agents = self.client();
        let s = agents
            .connect_agent_run(pb::ConnectAgentRunRequest {
                sandbox_id: self.s.id().into(),
                run_id: run_id.into(),
                after_seq,
            })
            .await?
            .into_inner();
        Ok(AgentRun {
            agents,
            sandbox_id: self.s.id().into(),
            run_id: run_id.into(),
            last_seq: after_seq,
            done: false,
            stream: Some(s),
            first: None,
        })
    }

    /// Kills a run's process tree; the run then completes.
    pub async fn cancel(&self, run_id: &str) -> Result<()> {
        self.client()
            .cancel_agent_run(pb::CancelAgentRunRequest {
                sandbox_id: self.s.id().into(),
                run_id: run_id.into(),
            })
            .await?;
        Ok(())
    }
}
