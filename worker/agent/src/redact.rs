//! Secret values cut out of a byte stream before it is written anywhere:
//! an agent run's output goes to its log on the sandbox's disk, which the
//! file API reads (a viewer may), so the values given for the run never
//! reach it. A value split across two reads is still found: what ends a
//! chunk and could begin a value waits for the next chunk (or the end).

/// What replaces each value.
pub const MASK: &[u8] = b"***";

/// One stream's redaction.
#[derive(Default)]
pub struct Redactor {
    /// The values, longest first (so the longer of two overlapping wins).
    secrets: Vec<Vec<u8>>,
    /// The end of the last chunk, held: it may begin a value.
    carry: Vec<u8>,
}

impl Redactor {
    pub fn new(secrets: &[Vec<u8>]) -> Redactor {
        let mut secrets: Vec<Vec<u8>> = secrets.iter().filter(|s| !s.is_empty()).cloned().collect();
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        secrets.dedup();
        Redactor {
            secrets,
            carry: Vec::new(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.secrets.is_empty()
    }

    /// The next chunk, redacted as far as it can be told yet.
    pub fn feed(&mut self, data: &[u8]) -> Vec<u8> {
        let mut buf = std::mem::take(&mut self.carry);
        buf.extend_from_slice(data);
        let mut out = Vec::with_capacity(buf.len());
        let mut i = 0;
        while i < buf.len() {
            let rest = &buf[i..];
            if let Some(s) = self.secrets.iter().find(|s| rest.starts_with(s)) {
                out.extend_from_slice(MASK);
                i += s.len();
                continue;
            }
            if self
                .secrets
                .iter()
                .any(|s| s.len() > rest.len() && s.starts_with(rest))
            {
                self.carry = rest.to_vec();
                return out;
            }
            out.push(buf[i]);
            i += 1;
        }
        out
    }

    /// What was held at the end of the stream: not a value.
    pub fn finish(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.carry)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(secrets: &[&str], chunks: &[&str]) -> String {
        let s: Vec<Vec<u8>> = secrets.iter().map(|s| s.as_bytes().to_vec()).collect();
        let mut r = Redactor::new(&s);
        let mut out = Vec::new();
        for c in chunks {
            out.extend(r.feed(c.as_bytes()));
        }
        out.extend(r.finish());
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn values_are_cut_wherever_the_reads_split_them() {
        assert_eq!(run(&["hunter2"], &["pw=hunter2\n"]), "pw=***\n");
        assert_eq!(
            run(&["hunter2"], &["pw=hun", "ter2 again hunter2"]),
            "pw=*** again ***"
        );
        assert_eq!(
            run(&["hunter2"], &["h", "u", "n", "t", "e", "r", "2"]),
            "***"
        );
        // A prefix that never completes comes out whole, at the end.
        assert_eq!(run(&["hunter2"], &["hunt", "er"]), "hunter");
        assert_eq!(run(&["hunter2"], &["hunt", "ed"]), "hunted");
        // Overlapping values: the longer wins; empty ones are ignored.
        assert_eq!(run(&["abc", "abcdef", ""], &["xabcdefy abc"]), "x***y ***");
        assert_eq!(run(&[], &["plain"]), "plain");
        // A value that starts inside another's false start.
        assert_eq!(run(&["aab"], &["a", "aab"]), "a***");
    }
}
