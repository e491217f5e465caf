//! `snapshot`: filesystem snapshots of sandboxes.

use super::*;

#[derive(Subcommand)]
pub enum SnapshotCmd {
    /// Snapshots a running or paused sandbox's files.
    Create {
        id: String,
        /// Unique in the tenant; made from the sandbox's id and the time when unset.
        #[arg(long, default_value = "")]
        name: String,
    },
    /// The tenant's snapshots, newest first.
    Ls {
        /// Only those of this sandbox.
        #[arg(long, default_value = "")]
        sandbox: String,
    },
    /// Shows one snapshot.
    Get { snapshot: String },
    /// Deletes snapshots; sandboxes made from them keep their files.
    Rm { snapshots: Vec<String> },
}

fn snapshot_json(s: &pb::Snapshot) -> Value {
    json!({
        "snapshot_id": s.snapshot_id,
        "name": s.name,
        "sandbox_id": s.sandbox_id,
        "image": s.image,
        "size_bytes": s.size_bytes,
    })
}

pub async fn snapshot(cli: &Cli, c: &SnapshotCmd) -> anyhow::Result<i32> {
    let fmt = cli.output;
    let line = |s: &pb::Snapshot| {
        format!(
            "{}\t{}\t{}\t{}",
            s.snapshot_id, s.name, s.sandbox_id, s.size_bytes
        )
    };
    match c {
        SnapshotCmd::Create { id, name } => {
            let s = client(cli)
                .await?
                .get(id)
                .await?
                .create_snapshot(name)
                .await?;
            print(fmt, &snapshot_json(&s), || s.snapshot_id.clone());
        }
        SnapshotCmd::Ls { sandbox } => {
            let c = client(cli).await?;
            let (mut all, mut token) = (Vec::new(), String::new());
            loop {
                let (page, next) = c.list_snapshots(sandbox, &token).await?;
                all.extend(page);
                if next.is_empty() {
                    break;
                }
                token = next;
            }
            let v: Vec<Value> = all.iter().map(snapshot_json).collect();
            print(fmt, &Value::Array(v), || {
                all.iter().map(line).collect::<Vec<_>>().join("\n")
            });
        }
        SnapshotCmd::Get { snapshot } => {
            let s = client(cli).await?.get_snapshot(snapshot).await?;
            print(fmt, &snapshot_json(&s), || line(&s));
        }
        SnapshotCmd::Rm { snapshots } => {
            let c = client(cli).await?;
            for s in snapshots {
                c.delete_snapshot(s).await?;
                if fmt == Format::Text {
                    println!("{s}");
                }
            }
        }
    }
    Ok(0)
}
