//! Migration 16: a refresh token records the password it was issued under
//! (`password::fingerprint`), so one issued while the password changed
//! (after the change's bulk revoke read the table) is refused at its next
//! refresh rather than living on under the new password. Rows from before
//! have "" and are revoked by a change as before.

use super::*;

pub(super) struct RefreshPasswords;

impl MigrationName for RefreshPasswords {
    fn name(&self) -> &str {
        "m20261207_000016_refresh_passwords"
    }
}

#[async_trait::async_trait]
impl MigrationTrait for RefreshPasswords {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.alter_table(
            Table::alter()
                .table(Alias::new("refresh_tokens"))
                .add_column(
                    ColumnDef::new(Alias::new("password_fp"))
                        .string()
                        .not_null()
                        .default(""),
                )
                .to_owned(),
        )
        .await
    }
}
