//! `agent`: coding-agent runs started, followed and cancelled; their
//! events printed as they come.

use super::*;

#[derive(Subcommand)]
pub enum AgentCmd {
    /// Runs an agent until it ends (`--prompt -` reads the prompt from stdin).
    Run {
        id: String,
        #[arg(long, default_value = "")]
        prompt: String,
        #[arg(long = "env")]
        envs: Vec<String>,
        /// A tenant secret it gets as an environment variable, repeatable.
        #[arg(long = "secret")]
        secrets: Vec<String>,
        #[arg(long)]
        cwd: Option<String>,
        #[arg(long)]
        user: Option<String>,
        /// Stop it after this many seconds (30 minutes by default).
        #[arg(long)]
        timeout: Option<u64>,
        #[arg(last = true, required = true)]
        command: Vec<String>,
    },
    /// Follows a run by id, from after event `--after`.
    Connect {
        id: String,
        run_id: String,
        #[arg(long, default_value_t = 0)]
        after: u64,
    },
    /// Stops a run.
    Cancel { id: String, run_id: String },
}

pub async fn agent(cli: &Cli, a: &AgentCmd) -> anyhow::Result<i32> {
    let run = match a {
        AgentCmd::Run {
            id,
            prompt,
            envs,
            secrets,
            cwd,
            user,
            timeout,
            command,
        } => {
            let prompt = if prompt == "-" {
                let mut p = String::new();
                std::io::Read::read_to_string(&mut std::io::stdin(), &mut p)?;
                p
            } else {
                prompt.clone()
            };
            let s = client(cli).await?.get(id).await?;
            let o = talon_sdk::AgentOptions {
                prompt,
                envs: pairs(envs)?,
                cwd: cwd.clone(),
                user: user.clone(),
                secrets: secrets.clone(),
                timeout: timeout.map(Duration::from_secs),
            };
            s.agent().run(command.clone(), o).await?
        }
        AgentCmd::Connect { id, run_id, after } => {
            let s = client(cli).await?.get(id).await?;
            s.agent().connect(run_id, *after).await?
        }
        AgentCmd::Cancel { id, run_id } => {
            client(cli)
                .await?
                .get(id)
                .await?
                .agent()
                .cancel(run_id)
                .await?;
            return Ok(0);
        }
    };
    follow_agent(cli.output, run).await
}

/// Prints a run's events (text: output lines to stdout and stderr, the
/// rest to stderr; json: one event per line) and returns its exit code.
async fn follow_agent(fmt: Format, mut run: talon_sdk::AgentRun) -> anyhow::Result<i32> {
    use talon_proto::v1::run_agent_response::Event;
    let mut code = 1;
    while let Some(e) = run.next().await? {
        if fmt == Format::Json {
            let v = match &e.event {
                Some(Event::Started(s)) => {
                    json!({"seq": e.seq, "started": {"pid": s.pid, "run_id": s.run_id}})
                }
                Some(Event::Output(o)) => json!({"seq": e.seq, "output": {
                    "stream": if o.stream == 2 { "stderr" } else { "stdout" }, "text": o.text}}),
                Some(Event::FileChange(c)) => json!({"seq": e.seq, "file_change": {"path": c.path,
                    "kind": talon_sdk::change_kind(c.kind)}}),
                Some(Event::Completed(c)) => {
                    json!({"seq": e.seq, "completed": {"exit_code": c.exit_code,
                    "timed_out": c.timed_out,
                    "duration_s": c.duration.map(|d| d.seconds as f64 + d.nanos as f64 / 1e9).unwrap_or(0.0)}})
                }
                None => continue,
            };
            println!("{v}");
        }
        match e.event {
            Some(Event::Started(s)) if fmt != Format::Json => {
                eprintln!("run {} (pid {})", s.run_id, s.pid)
            }
            Some(Event::Output(o)) if fmt != Format::Json => {
                if o.stream == 2 {
                    eprintln!("{}", o.text)
                } else {
                    println!("{}", o.text)
                }
            }
            Some(Event::FileChange(c)) if fmt != Format::Json => {
                eprintln!("~ {} ({})", c.path, talon_sdk::change_kind(c.kind))
            }
            Some(Event::Completed(c)) => {
                code = c.exit_code;
                if fmt != Format::Json && c.timed_out {
                    eprintln!("the run timed out");
                }
            }
            _ => {}
        }
    }
    Ok(code)
}
