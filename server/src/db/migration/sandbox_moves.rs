//! Migration 17: the failover history, one row per move of a sandbox
//! (`domain::sandboxes::history`), read newest first by id.

use super::*;

pub(super) struct SandboxMoves;

impl MigrationName for SandboxMoves {
    fn name(&self) -> &str {
        "m20261207_000017_sandbox_moves"
    }
}

#[async_trait::async_trait]
impl MigrationTrait for SandboxMoves {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(table(
            "sandbox_moves",
            vec![
                ColumnDef::new(Alias::new("id"))
                    .big_integer()
                    .not_null()
                    .auto_increment()
                    .primary_key()
                    .to_owned(),
                big("moved_at"),
                text("sandbox_id"),
                text("tenant_id"),
                text("from_worker"),
                text("to_worker"),
                text("cause"),
                big("generation"),
                boolean("workspace_kept"),
            ],
        ))
        .await?;
        // By sandbox, and by either end for a worker's moves.
        for (name, col) in [
            ("sandbox_moves_sandbox", "sandbox_id"),
            ("sandbox_moves_from", "from_worker"),
            ("sandbox_moves_to", "to_worker"),
        ] {
            m.create_index(index(name, "sandbox_moves", &[col, "id"], false))
                .await?;
        }
        Ok(())
    }
}
