//! Migration 14: what durability needs. Each sandbox's restart policy
//! (`always`, `never`) and what it does when its worker is lost (`""` for
//! the platform's default, `wait`, `move`) and the hash of the create
//! request that made it (an idempotent retry must ask for the same
//! sandbox); each worker's fence scope as it last reported applying it,
//! the registration its beats belong to, and when the autopilot last
//! began moving sandboxes off it (the placement cooldown).

use super::*;

pub(super) struct Durability;

impl MigrationName for Durability {
    fn name(&self) -> &str {
        "m20261206_000014_durability"
    }
}

#[async_trait::async_trait]
impl MigrationTrait for Durability {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        // One column per statement: SQLite alters one at a time.
        let sandbox_cols = [
            ColumnDef::new(Alias::new("restart_policy"))
                .string()
                .not_null()
                .default("always")
                .to_owned(),
            ColumnDef::new(Alias::new("worker_loss"))
                .string()
                .not_null()
                .default("")
                .to_owned(),
            ColumnDef::new(Alias::new("request_hash"))
                .string()
                .not_null()
                .default("")
                .to_owned(),
        ];
        for mut c in sandbox_cols {
            m.alter_table(
                Table::alter()
                    .table(Alias::new("sandboxes"))
                    .add_column(&mut c)
                    .to_owned(),
            )
            .await?;
        }
        for name in ["fence_scope", "session_at", "last_moved_at"] {
            m.alter_table(
                Table::alter()
                    .table(Alias::new("workers"))
                    .add_column(
                        ColumnDef::new(Alias::new(name))
                            .big_integer()
                            .not_null()
                            .default(0i64),
                    )
                    .to_owned(),
            )
            .await?;
        }
        Ok(())
    }
}
