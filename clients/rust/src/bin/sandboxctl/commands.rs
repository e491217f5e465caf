//! The larger subcommands: login, whoami, list, metrics, cp and logs.

use super::*;

/// Checks the key, then keeps the endpoint and (0600) the key.
pub async fn login(cli: &Cli, api_key: &Option<String>) -> anyhow::Result<i32> {
    let key = match api_key {
        Some(k) => k.clone(),
        None => {
            eprint!("API key: ");
            let mut s = String::new();
            std::io::stdin().read_line(&mut s)?;
            s.trim().to_string()
        }
    };
    let u = url(cli);
    let who = Client::connect(&u, &key).await?.whoami().await?;
    let dir = config_dir();
    std::fs::create_dir_all(&dir)?;
    std::fs::write(
        dir.join("config.json"),
        serde_json::to_vec_pretty(&Config {
            url: Some(u.clone()),
        })?,
    )?;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(credentials_path())?;
    f.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(0o600))?;
    f.write_all(key.as_bytes())?;
    println!(
        "logged in to {u} as {} (tenant {})",
        if who.email.is_empty() {
            &who.api_key_id
        } else {
            &who.email
        },
        who.tenant_id
    );
    Ok(0)
}

pub async fn whoami(cli: &Cli) -> anyhow::Result<i32> {
    let w = client(cli).await?.whoami().await?;
    let v = json!({
        "tenant_id": w.tenant_id, "user_id": w.user_id, "email": w.email,
        "role": pb::Role::try_from(w.role).map(|r| r.as_str_name().trim_start_matches("ROLE_").to_lowercase()).unwrap_or_default(),
        "api_key_id": w.api_key_id, "platform_admin": w.platform_admin,
    });
    print(cli.output, &v, || {
        format!(
            "{} {} ({})",
            v["email"].as_str().unwrap_or(""),
            v["tenant_id"].as_str().unwrap_or(""),
            v["role"].as_str().unwrap_or("")
        )
    });
    Ok(0)
}

pub async fn list(
    cli: &Cli,
    page_size: &i32,
    page_token: &str,
    metadata: &[String],
    states: &[String],
) -> anyhow::Result<i32> {
    let states = states
        .iter()
        .map(|s| {
            pb::SandboxState::from_str_name(&format!("SANDBOX_STATE_{}", s.to_uppercase()))
                .filter(|s| *s != pb::SandboxState::Unspecified)
                .ok_or_else(|| anyhow::anyhow!("unknown state {s:?}"))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let (list, next) = client(cli)
        .await?
        .list_filtered(pairs(metadata)?, &states, *page_size, page_token)
        .await?;
    let v = json!({
        "sandboxes": list.iter().map(sandbox_json).collect::<Vec<_>>(),
        "next_page_token": next,
    });
    print(cli.output, &v, || {
        let mut out = format!("{:<32} {:<10} IMAGE", "ID", "STATE");
        for s in &list {
            out.push_str(&format!(
                "\n{:<32} {:<10} {}",
                s.sandbox_id,
                state_name(s.state),
                s.image
            ));
        }
        if !next.is_empty() {
            out.push_str(&format!("\n(more: --page-token {next})"));
        }
        out
    });
    Ok(0)
}

/// Copies one way: `ID:PATH` is in the sandbox, anything else local (`-`: stdin or stdout).
pub async fn metrics(cli: &Cli, id: &str) -> anyhow::Result<i32> {
    let m = client(cli).await?.get(id).await?.metrics().await?;
    let v = json!({
        "cpu_count": m.cpu_count, "cpu_used_pct": m.cpu_used_pct,
        "mem_used_bytes": m.mem_used_bytes, "mem_total_bytes": m.mem_total_bytes,
        "disk_used_bytes": m.disk_used_bytes, "disk_total_bytes": m.disk_total_bytes,
    });
    print(cli.output, &v, || {
        format!(
            "cpu {:.1}% of {} · memory {} of {} MiB · disk {} of {} MiB",
            m.cpu_used_pct,
            m.cpu_count,
            m.mem_used_bytes >> 20,
            m.mem_total_bytes >> 20,
            m.disk_used_bytes >> 20,
            m.disk_total_bytes >> 20
        )
    });
    Ok(0)
}

pub async fn cp(cli: &Cli, src: &str, dst: &str, user: &str) -> anyhow::Result<i32> {
    let c = client(cli).await?;
    match (remote(src), remote(dst)) {
        (None, Some((id, path))) => {
            let data = if src == "-" {
                let mut b = Vec::new();
                std::io::stdin().read_to_end(&mut b)?;
                b
            } else {
                std::fs::read(src)?
            };
            let info = c.get(id).await?.files().write_as(path, &data, user).await?;
            let v = json!({"size": info.size, "path": info.path});
            if cli.output == Format::Json {
                println!("{v}");
            } else {
                eprintln!("{} bytes to {id}:{}", info.size, info.path);
            }
        }
        (Some((id, path)), None) => {
            let data = c.get(id).await?.files().read_as(path, user).await?;
            if dst == "-" {
                std::io::stdout().write_all(&data)?;
            } else {
                std::fs::write(dst, &data)?;
            }
        }
        _ => anyhow::bail!("one side must be ID:PATH and the other a local path"),
    }
    Ok(0)
}

pub async fn logs(
    cli: &Cli,
    id: &str,
    pid: &Option<u32>,
    tag: &Option<String>,
    follow: bool,
) -> anyhow::Result<i32> {
    let s = client(cli).await?.get(id).await?;
    let t = target(*pid, tag)?;
    let ev = Events(cli.output);
    if follow {
        // Everything kept so far, then live, until it exits.
        let mut h = s.commands().connect(&t, 0).await?;
        return ev.drain(&mut h).await;
    }
    // What is kept now, page by page.
    let mut after = 0;
    loop {
        let page = s.commands().logs(&t, after).await?;
        for e in &page.entries {
            ev.out(e.stream, &e.data)?;
        }
        if !page.has_more || page.entries.is_empty() {
            break;
        }
        after = page.next_after_seq;
    }
    Ok(0)
}
