//! The messages of a JSON client stream, cut from the body as it arrives:
//! one object, an array of objects, or NDJSON. Each object is handed on
//! as soon as its closing brace is read, so a request holds one message
//! at a time, not the whole body decoded: a 15 MiB array of 1.15 M tiny
//! messages once raised the gateway's memory from 304 MiB to 1.1 GiB.

/// Why a body is not a sequence of JSON objects.
#[derive(Debug, PartialEq, Eq)]
pub struct Malformed(pub &'static str);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    /// Nothing but whitespace yet.
    Start,
    /// Objects one after another (one object, or NDJSON).
    Objects,
    /// Inside `[`: before an element, or after one (a `,` or `]` next).
    ArrayElement,
    ArraySeparator,
    /// After the closing `]`.
    Done,
}

/// Cuts objects out of a byte stream; feed it chunks with `push`.
#[derive(Debug)]
pub struct Splitter {
    buf: Vec<u8>,
    /// Where scanning resumes in `buf`.
    at: usize,
    /// Where the object being read starts, when inside one.
    start: Option<usize>,
    depth: usize,
    in_string: bool,
    escaped: bool,
    shape: Shape,
    /// Objects cut so far.
    count: usize,
}

impl Default for Splitter {
    fn default() -> Self {
        Splitter {
            buf: Vec::new(),
            at: 0,
            start: None,
            depth: 0,
            in_string: false,
            escaped: false,
            shape: Shape::Start,
            count: 0,
        }
    }
}

impl Splitter {
    /// Adds bytes; the objects they complete, in order.
    pub fn push(&mut self, bytes: &[u8]) -> Result<Vec<Vec<u8>>, Malformed> {
        self.buf.extend_from_slice(bytes);
        let mut out = Vec::new();
        while self.at < self.buf.len() {
            let b = self.buf[self.at];
            self.at += 1;
            if let Some(start) = self.start {
                if self.in_string {
                    match (self.escaped, b) {
                        (true, _) => self.escaped = false,
                        (false, b'\\') => self.escaped = true,
                        (false, b'"') => self.in_string = false,
                        _ => {}
                    }
                    continue;
                }
                match b {
                    b'"' => self.in_string = true,
                    b'{' | b'[' => self.depth += 1,
                    b'}' | b']' => {
                        self.depth -= 1;
                        if self.depth == 0 {
                            out.push(self.buf[start..self.at].to_vec());
                            self.count += 1;
                            self.start = None;
                            if self.shape == Shape::ArrayElement {
                                self.shape = Shape::ArraySeparator;
                            }
                        }
                    }
                    _ => {}
                }
                continue;
            }
            if b.is_ascii_whitespace() {
                continue;
            }
            match (self.shape, b) {
                (Shape::Start, b'[') => self.shape = Shape::ArrayElement,
                (Shape::Start | Shape::Objects, b'{') | (Shape::ArrayElement, b'{') => {
                    if self.shape == Shape::Start {
                        self.shape = Shape::Objects;
                    }
                    self.start = Some(self.at - 1);
                    self.depth = 1;
                }
                (Shape::ArraySeparator, b',') => self.shape = Shape::ArrayElement,
                (Shape::ArraySeparator, b']') => self.shape = Shape::Done,
                (Shape::ArrayElement, b']') if self.count == 0 => self.shape = Shape::Done,
                (Shape::Done, _) => return Err(Malformed("text after the closing ]")),
                _ => return Err(Malformed("each message must be a JSON object")),
            }
        }
        // Keep only the object under way.
        let keep = self.start.unwrap_or(self.buf.len());
        self.buf.drain(..keep);
        self.at -= keep;
        if let Some(s) = &mut self.start {
            *s = 0;
        }
        Ok(out)
    }

    /// Bytes held for the object under way.
    pub fn pending(&self) -> usize {
        self.buf.len()
    }

    /// The body ended: is it a whole sequence?
    pub fn finish(&self) -> Result<(), Malformed> {
        if self.start.is_some() {
            return Err(Malformed("the body ends inside a message"));
        }
        match self.shape {
            Shape::ArrayElement | Shape::ArraySeparator => {
                Err(Malformed("the body ends before the closing ]"))
            }
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(chunks: &[&[u8]]) -> Result<Vec<String>, Malformed> {
        let mut s = Splitter::default();
        let mut out = Vec::new();
        for c in chunks {
            out.extend(s.push(c)?);
        }
        s.finish()?;
        Ok(out
            .into_iter()
            .map(|v| String::from_utf8(v).unwrap())
            .collect())
    }

    #[test]
    fn objects_arrays_and_ndjson_in_any_cut() {
        let body = br#"[ {"a": "}{\"]", "b": [1, {"c": 2}]}, {"d": 3} ]"#;
        for cut in 0..body.len() {
            let got = all(&[&body[..cut], &body[cut..]]).unwrap();
            assert_eq!(
                got,
                vec![r#"{"a": "}{\"]", "b": [1, {"c": 2}]}"#, r#"{"d": 3}"#],
                "cut at {cut}"
            );
        }
        assert_eq!(all(&[b"{\"x\":1}\n{\"y\":2}\n"]).unwrap().len(), 2);
        assert_eq!(all(&[b" {\"x\":1} "]).unwrap().len(), 1);
        assert_eq!(all(&[b"[]"]).unwrap().len(), 0);
        assert_eq!(all(&[b""]).unwrap().len(), 0);
    }

    #[test]
    fn what_is_not_a_sequence_of_objects() {
        for bad in [
            &b"[1]"[..],
            b"[{\"a\":1} {\"b\":2}]",
            b"[{\"a\":1},]x",
            b"\"s\"",
            b"[{\"a\":1}",
            b"{\"a\":1",
            b"[{}] {}",
            b"[,{}]",
        ] {
            assert!(all(&[bad]).is_err(), "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn only_the_message_under_way_is_held() {
        let mut s = Splitter::default();
        s.push(b"[").unwrap();
        for _ in 0..10_000 {
            assert_eq!(s.push(b"{\"data\":\"eA==\"},").unwrap().len(), 1);
        }
        s.push(b"{\"data\":").unwrap();
        assert_eq!(s.pending(), 8);
    }
}
