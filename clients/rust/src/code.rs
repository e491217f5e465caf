//! Code contexts: kernels inside the sandbox (Python in ipykernel,
//! JavaScript in Node, Bash) that keep their state between runs. `run`
//! gathers a run's events into an `Execution`; an error the code raises
//! is `Execution::error`, not an `Err`.

use crate::{Error, Result, Sandbox, Svc, duration, pb};
use std::time::Duration;

pub use pb::CodeLanguage;

pub struct CodeContexts<'a> {
    pub(crate) s: &'a Sandbox,
}

/// A run: its output, rich results, error and how it ended.
#[derive(Debug, Default, Clone)]
pub struct Execution {
    pub stdout: String,
    pub stderr: String,
    pub results: Vec<pb::CodeResult>,
    pub error: Option<pb::CodeError>,
    pub execution_count: i32,
    pub duration: Duration,
    pub interrupted: bool,
    pub timed_out: bool,
}

impl Execution {
    /// The main result's text/plain.
    pub fn text(&self) -> Option<&str> {
        self.results
            .iter()
            .find(|r| r.is_main_result)
            .and_then(|r| r.data.get("text/plain"))
            .map(String::as_str)
    }
}

/// What `run` runs in: a context by id, or the default context of a
/// language.
#[derive(Debug, Clone)]
pub enum RunIn<'a> {
    Context(&'a str),
    Default(CodeLanguage),
}

impl CodeContexts<'_> {
    fn client(&self) -> pb::code_service_client::CodeServiceClient<Svc> {
        self.s.client().code()
    }

    /// Starts a context of `language` in `cwd` (the workspace when None).
    pub async fn create_context(
        &self,
        language: CodeLanguage,
        cwd: Option<&str>,
    ) -> Result<pb::CodeContext> {
        Ok(self
            .client()
            .create_code_context(pb::CreateCodeContextRequest {
                sandbox_id: self.s.id().into(),
                language: language as i32,
                cwd: cwd.unwrap_or_default().into(),
                env: Default::default(),
            })
            .await?
            .into_inner()
            .context
            .unwrap_or_default())
    }

    pub async fn list_contexts(&self) -> Result<Vec<pb::CodeContext>> {
        Ok(self
            .client()
            .list_code_contexts(pb::ListCodeContextsRequest {
                sandbox_id: self.s.id().into(),
            })
            .await?
            .into_inner()
            .contexts)
    }

    /// A fresh kernel: the state is gone, the id stays.
    pub async fn restart_context(&self, context_id: &str) -> Result<pb::CodeContext> {
        Ok(self
            .client()
            .restart_code_context(pb::RestartCodeContextRequest {
                sandbox_id: self.s.id().into(),
                context_id: context_id.into(),
            })
            .await?
            .into_inner()
            .context
            .unwrap_or_default())
    }

    /// Interrupts the context's run (KeyboardInterrupt in Python).
    pub async fn interrupt(&self, context_id: &str) -> Result<()> {
        self.client()
            .interrupt_code_context(pb::InterruptCodeContextRequest {
                sandbox_id: self.s.id().into(),
                context_id: context_id.into(),
            })
            .await?;
        Ok(())
    }

    pub async fn delete_context(&self, context_id: &str) -> Result<()> {
        self.client()
            .delete_code_context(pb::DeleteCodeContextRequest {
                sandbox_id: self.s.id().into(),
                context_id: context_id.into(),
            })
            .await?;
        Ok(())
    }

    /// Runs `code` and gathers its events; `on_event` sees each as it
    /// arrives.
    pub async fn run(
        &self,
        code: &str,
        run_in: RunIn<'_>,
        timeout: Option<Duration>,
        mut on_event: impl FnMut(&pb::run_code_response::Event),
    ) -> Result<Execution> {
        use pb::run_code_response::Event;
        let (context_id, language) = match run_in {
            RunIn::Context(id) => (id.to_string(), 0),
            RunIn::Default(l) => (String::new(), l as i32),
        };
        let mut stream = self
            .client()
            .run_code(pb::RunCodeRequest {
                sandbox_id: self.s.id().into(),
                context_id,
                language,
                code: code.into(),
                timeout: timeout.map(duration),
                ..Default::default()
            })
            .await?
            .into_inner();
        let mut x = Execution::default();
        let mut done = false;
        while let Some(m) = stream.message().await? {
            let Some(ev) = m.event else { continue };
            on_event(&ev);
            match ev {
                Event::Stdout(o) => x.stdout.push_str(&o.text),
                Event::Stderr(o) => x.stderr.push_str(&o.text),
                Event::Result(r) => x.results.push(r),
                Event::CodeError(e) => x.error = Some(e),
                Event::Completed(c) => {
                    x.execution_count = c.execution_count;
                    x.duration = c
                        .duration
                        .map(|d| Duration::new(d.seconds.max(0) as u64, d.nanos.max(0) as u32))
                        .unwrap_or_default();
                    x.interrupted = c.interrupted;
                    x.timed_out = c.timed_out;
                    done = true;
                }
            }
        }
        if !done {
            return Err(Error::Status(tonic::Status::unknown(
                "the run ended without completing",
            )));
        }
        Ok(x)
    }
}
