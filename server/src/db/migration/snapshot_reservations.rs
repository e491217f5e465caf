//! Migration 15: a snapshot's row is written before its copy, as the
//! reservation of the bytes it may hold (`pending`, its `size_bytes` the
//! reservation), so concurrent snapshots of a tenant are checked against
//! its quota together; the copy's real size replaces it when done.

use super::*;

pub(super) struct SnapshotReservations;

impl MigrationName for SnapshotReservations {
    fn name(&self) -> &str {
        "m20261206_000015_snapshot_reservations"
    }
}

#[async_trait::async_trait]
impl MigrationTrait for SnapshotReservations {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.alter_table(
            Table::alter()
                .table(Alias::new("snapshots"))
                .add_column(
                    ColumnDef::new(Alias::new("pending"))
                        .boolean()
                        .not_null()
                        .default(false),
                )
                .to_owned(),
        )
        .await
    }
}
