//! `fs`: a sandbox's files listed, described, made, moved, removed and
//! linked to (`cp` copies their contents).

use super::*;

#[derive(Subcommand)]
pub enum FsCmd {
    /// Lists a directory.
    Ls {
        id: String,
        #[arg(default_value = ".")]
        path: String,
    },
    /// Describes a path.
    Stat { id: String, path: String },
    /// Makes a directory and its parents.
    Mkdir { id: String, path: String },
    /// Moves a path.
    Mv {
        id: String,
        from: String,
        to: String,
    },
    /// Removes a path.
    Rm {
        id: String,
        path: String,
        #[arg(short, long)]
        recursive: bool,
    },
    /// A URL that reads (or, with --write, replaces) one file with no other credential.
    Url {
        id: String,
        path: String,
        #[arg(long)]
        write: bool,
        /// Seconds it stays valid (3600 by default, 86400 at most).
        #[arg(long)]
        ttl: Option<u64>,
    },
}

pub async fn fs(cli: &Cli, f: &FsCmd) -> anyhow::Result<i32> {
    let c = client(cli).await?;
    let file_json = |f: &pb::FileInfo| {
        json!({
            "path": f.path, "name": f.name, "size": f.size, "mode": f.mode,
            "type": match pb::FileType::try_from(f.r#type) {
                Ok(pb::FileType::Directory) => "dir",
                Ok(pb::FileType::Symlink) => "symlink",
                _ => "file",
            },
        })
    };
    match f {
        FsCmd::Ls { id, path } => {
            let entries = c.get(id).await?.files().list(path).await?;
            let v = json!({"entries": entries.iter().map(file_json).collect::<Vec<_>>()});
            print(cli.output, &v, || {
                entries
                    .iter()
                    .map(|e| format!("{:>10} {}", e.size, e.name))
                    .collect::<Vec<_>>()
                    .join("\n")
            });
        }
        FsCmd::Stat { id, path } => {
            let info = c.get(id).await?.files().stat(path).await?;
            let v = file_json(&info);
            print(cli.output, &v, || {
                format!(
                    "{} {} {} bytes",
                    info.path,
                    v["type"].as_str().unwrap_or(""),
                    info.size
                )
            });
        }
        FsCmd::Mkdir { id, path } => c.get(id).await?.files().make_dir(path).await?,
        FsCmd::Mv { id, from, to } => c.get(id).await?.files().rename(from, to).await?,
        FsCmd::Rm {
            id,
            path,
            recursive,
        } => c.get(id).await?.files().remove(path, *recursive).await?,
        FsCmd::Url {
            id,
            path,
            write,
            ttl,
        } => {
            let url = c
                .get(id)
                .await?
                .file_url(path, *write, ttl.map(Duration::from_secs))
                .await?;
            print(cli.output, &json!({ "url": url }), || url.clone());
        }
    }
    Ok(0)
}
