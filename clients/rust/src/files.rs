//! Files in a sandbox: read, write, list, stat, make, move, remove.

use super::*;
use talon_proto::v1 as pb;
use tokio_stream::StreamExt;

pub struct Files<'a> {
    pub(crate) s: &'a Sandbox,
}

impl Files<'_> {
    /// Writes a whole file atomically, in 1 MiB messages.
    pub async fn write(&self, path: &str, data: &[u8]) -> Result<pb::FileInfo> {
        self.write_as(path, data, "").await
    }

    /// Writes a file as a user of the sandbox (their permissions; the file
    /// is theirs); `""` is the agent's own user.
    pub async fn write_as(&self, path: &str, data: &[u8], user: &str) -> Result<pb::FileInfo> {
        use pb::write_file_request::Message as M;
        let mut msgs = vec![pb::WriteFileRequest {
            sandbox_id: self.s.id().into(),
            message: Some(M::Header(pb::WriteFileHeader {
                path: path.into(),
                mode: 0,
                create_parents: true,
                no_overwrite: false,
                user: user.into(),
            })),
        }];
        msgs.extend(data.chunks(1 << 20).map(|c| pb::WriteFileRequest {
            sandbox_id: String::new(),
            message: Some(M::Data(c.to_vec())),
        }));
        // Only a finished upload is written.
        msgs.push(pb::WriteFileRequest {
            sandbox_id: String::new(),
            message: Some(M::Finish(pb::WriteFileFinish {
                size: data.len() as i64,
            })),
        });
        let r = self
            .s
            .client
            .files()
            .write_file(tokio_stream::iter(msgs))
            .await?
            .into_inner();
        Ok(r.info.unwrap_or_default())
    }

    pub async fn read(&self, path: &str) -> Result<Vec<u8>> {
        self.read_as(path, "").await
    }

    /// Reads a file as a user of the sandbox.
    pub async fn read_as(&self, path: &str, user: &str) -> Result<Vec<u8>> {
        let mut s = self
            .s
            .client
            .files()
            .read_file(pb::ReadFileRequest {
                sandbox_id: self.s.id().into(),
                path: path.into(),
                offset: 0,
                length: 0,
                user: user.into(),
            })
            .await?
            .into_inner();
        let mut out = Vec::new();
        while let Some(c) = s.next().await {
            out.extend(c?.data);
        }
        Ok(out)
    }

    pub async fn list(&self, path: &str) -> Result<Vec<pb::FileInfo>> {
        Ok(self
            .s
            .client
            .files()
            .list_dir(pb::ListDirRequest {
                sandbox_id: self.s.id().into(),
                path: path.into(),
                depth: 1,
                ..Default::default()
            })
            .await?
            .into_inner()
            .entries)
    }

    pub async fn stat(&self, path: &str) -> Result<pb::FileInfo> {
        Ok(self
            .s
            .client
            .files()
            .stat(pb::StatRequest {
                sandbox_id: self.s.id().into(),
                path: path.into(),
                ..Default::default()
            })
            .await?
            .into_inner()
            .info
            .unwrap_or_default())
    }

    pub async fn make_dir(&self, path: &str) -> Result<()> {
        self.s
            .client
            .files()
            .make_dir(pb::MakeDirRequest {
                sandbox_id: self.s.id().into(),
                path: path.into(),
                parents: true,
                mode: 0,
                ..Default::default()
            })
            .await?;
        Ok(())
    }

    pub async fn rename(&self, from: &str, to: &str) -> Result<()> {
        self.s
            .client
            .files()
            .move_path(pb::MovePathRequest {
                sandbox_id: self.s.id().into(),
                source_path: from.into(),
                destination_path: to.into(),
                overwrite: false,
                ..Default::default()
            })
            .await?;
        Ok(())
    }

    pub async fn remove(&self, path: &str, recursive: bool) -> Result<()> {
        self.s
            .client
            .files()
            .remove_path(pb::RemovePathRequest {
                sandbox_id: self.s.id().into(),
                path: path.into(),
                recursive,
                ..Default::default()
            })
            .await?;
        Ok(())
    }
}
