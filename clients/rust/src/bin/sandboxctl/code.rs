//! `code`: code contexts (kernels that keep state between runs).

use super::*;

#[derive(Subcommand)]
pub enum CodeCmd {
    /// Runs code (from the argument, or stdin when it is "-"), printing
    /// its output as it comes and then its result or error.
    Run {
        id: String,
        code: String,
        /// The context; the language's default context when unset.
        #[arg(long)]
        context: Option<String>,
        /// python, javascript or bash.
        #[arg(long, default_value = "python")]
        language: String,
        /// Seconds before the run is interrupted (300 by default).
        #[arg(long)]
        timeout: Option<u64>,
    },
    /// Starts a context; prints its id.
    Create {
        id: String,
        #[arg(long, default_value = "python")]
        language: String,
        #[arg(long)]
        cwd: Option<String>,
    },
    /// Lists the sandbox's contexts.
    Ls { id: String },
    /// Interrupts a context's run.
    Interrupt { id: String, context: String },
    /// Restarts a context's kernel (its state is lost).
    Restart { id: String, context: String },
    /// Deletes a context.
    Rm { id: String, context: String },
}

fn code_language(l: &str) -> anyhow::Result<talon_sdk::CodeLanguage> {
    use talon_sdk::CodeLanguage as L;
    Ok(match l.to_ascii_lowercase().as_str() {
        "python" => L::Python,
        "javascript" | "js" => L::Javascript,
        "bash" => L::Bash,
        _ => anyhow::bail!("unknown language {l:?}: python, javascript or bash"),
    })
}

fn context_json(c: &talon_proto::v1::CodeContext) -> Value {
    let lang = talon_proto::v1::CodeLanguage::try_from(c.language)
        .map(|l| {
            l.as_str_name()
                .trim_start_matches("CODE_LANGUAGE_")
                .to_lowercase()
        })
        .unwrap_or_default();
    json!({"context_id": c.context_id, "language": lang, "cwd": c.cwd,
           "execution_count": c.execution_count})
}

pub async fn code(cli: &Cli, c: &CodeCmd) -> anyhow::Result<i32> {
    use talon_proto::v1::run_code_response::Event;
    let fmt = cli.output;
    match c {
        CodeCmd::Run {
            id,
            code,
            context,
            language,
            timeout,
        } => {
            let src = if code == "-" {
                std::io::read_to_string(std::io::stdin())?
            } else {
                code.clone()
            };
            let s = client(cli).await?.get(id).await?;
            let run_in = match context {
                Some(c) => talon_sdk::RunIn::Context(c),
                None => talon_sdk::RunIn::Default(code_language(language)?),
            };
            let x = s
                .code()
                .run(&src, run_in, timeout.map(Duration::from_secs), |ev| {
                    if fmt == Format::Json {
                        return;
                    }
                    match ev {
                        Event::Stdout(o) => {
                            print!("{}", o.text);
                            let _ = std::io::stdout().flush();
                        }
                        Event::Stderr(o) => eprint!("{}", o.text),
                        _ => {}
                    }
                })
                .await?;
            let results: Vec<Value> = x
                .results
                .iter()
                .map(|r| json!({"data": r.data, "is_main_result": r.is_main_result}))
                .collect();
            let error = x
                .error
                .as_ref()
                .map(|e| json!({"name": e.name, "value": e.value, "traceback": e.traceback}));
            if fmt == Format::Json {
                let v = json!({
                    "stdout": x.stdout, "stderr": x.stderr, "results": results,
                    "error": error, "execution_count": x.execution_count,
                    "duration_ms": x.duration.as_millis() as u64,
                    "interrupted": x.interrupted, "timed_out": x.timed_out,
                });
                println!("{}", serde_json::to_string_pretty(&v)?);
            } else {
                for r in &x.results {
                    match r.data.get("text/plain") {
                        Some(t) if r.is_main_result => println!("{t}"),
                        _ => {
                            let mut kinds: Vec<&str> = r.data.keys().map(String::as_str).collect();
                            kinds.sort();
                            println!("[display: {}]", kinds.join(", "));
                        }
                    }
                }
                if let Some(e) = &x.error {
                    for line in &e.traceback {
                        eprintln!("{line}");
                    }
                    eprintln!("{}: {}", e.name, e.value);
                }
            }
            return Ok(if x.error.is_some() { 1 } else { 0 });
        }
        CodeCmd::Create { id, language, cwd } => {
            let s = client(cli).await?.get(id).await?;
            let ctx = s
                .code()
                .create_context(code_language(language)?, cwd.as_deref())
                .await?;
            print(fmt, &context_json(&ctx), || ctx.context_id.clone());
        }
        CodeCmd::Ls { id } => {
            let s = client(cli).await?.get(id).await?;
            let list = s.code().list_contexts().await?;
            let v: Vec<Value> = list.iter().map(context_json).collect();
            print(fmt, &Value::Array(v.clone()), || {
                v.iter()
                    .map(|c| {
                        format!(
                            "{}\t{}\t{}\t{}",
                            c["context_id"].as_str().unwrap_or_default(),
                            c["language"].as_str().unwrap_or_default(),
                            c["execution_count"],
                            c["cwd"].as_str().unwrap_or_default()
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            });
        }
        CodeCmd::Interrupt { id, context } => {
            client(cli)
                .await?
                .get(id)
                .await?
                .code()
                .interrupt(context)
                .await?;
        }
        CodeCmd::Restart { id, context } => {
            let s = client(cli).await?.get(id).await?;
            let ctx = s.code().restart_context(context).await?;
            print(fmt, &context_json(&ctx), || ctx.context_id.clone());
        }
        CodeCmd::Rm { id, context } => {
            client(cli)
                .await?
                .get(id)
                .await?
                .code()
                .delete_context(context)
                .await?;
        }
    }
    Ok(0)
}
