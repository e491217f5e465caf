//! Times: milliseconds since the Unix epoch is how every time is stored
//! and compared; `google.protobuf.Timestamp` is how the contract says it.

/// Milliseconds since the Unix epoch (0 if the clock is before it).
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// A time in ms as the contract's Timestamp.
pub fn ms_to_timestamp(ms: i64) -> prost_types::Timestamp {
    prost_types::Timestamp {
        seconds: ms.div_euclid(1000),
        nanos: (ms.rem_euclid(1000) * 1_000_000) as i32,
    }
}

/// Whole seconds since the epoch as the contract's Timestamp.
pub fn secs_to_timestamp(secs: u64) -> prost_types::Timestamp {
    prost_types::Timestamp {
        seconds: secs as i64,
        nanos: 0,
    }
}

/// The contract's Timestamp as ms.
pub fn timestamp_to_ms(t: &prost_types::Timestamp) -> i64 {
    t.seconds * 1000 + i64::from(t.nanos) / 1_000_000
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        for ms in [0, 1, 999, 1_796_383_451_123, -1, -1001] {
            assert_eq!(timestamp_to_ms(&ms_to_timestamp(ms)), ms, "{ms}");
        }
        let t = ms_to_timestamp(-1);
        assert_eq!((t.seconds, t.nanos), (-1, 999_000_000));
        assert!(now_ms() > 1_700_000_000_000);
    }
}
