//! Whole numbers back as integers in what the A2A SDK writes.
//!
//! `a2a-server-lf` carries a data Part's value as protobuf's `Value`, which holds doubles only,
//! and prints each through serde_json, so the base n 4654 recite put in a Part goes out as
//! `4654.0`. ProtoJSON lets a double be printed `4654` (Go's protojson does), and readers of
//! Upperhand citations — recite's among them — take `4654.0` for a number that had a decimal
//! written. So the bodies of recite's A2A bindings are rewritten on the way out: every number
//! token `N.0` outside a string becomes `N`. Only that spelling changes; no byte inside a
//! string, no other number and no structure is touched, and it streams (SSE included).

use axum::body::{Body, Bytes};
use axum::http::header::{CONTENT_LENGTH, CONTENT_TYPE};
use axum::response::Response;
use futures::StreamExt as _;

/// The middleware: rewrites JSON and SSE bodies (see the module's doc), others pass as they are.
pub async fn as_integers(response: Response) -> Response {
    let kind = response.headers().get(CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    let json = kind.starts_with("application/json")
        || kind.starts_with("text/event-stream")
        || kind.split(';').next().is_some_and(|t| t.trim().ends_with("+json"));
    if !json {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    // The length changes; the body is sent chunked.
    parts.headers.remove(CONTENT_LENGTH);
    let chunks = body.into_data_stream();
    let rewritten =
        futures::stream::unfold((chunks, Some(Wholes::default())), |(mut chunks, state)| async move {
            let mut w = state?;
            match chunks.next().await {
                Some(Ok(chunk)) => Some((Ok(Bytes::from(w.feed(&chunk))), (chunks, Some(w)))),
                Some(Err(e)) => Some((Err(e), (chunks, None))),
                None => Some((Ok(Bytes::from(w.finish())), (chunks, None))),
            }
        });
    Response::from_parts(parts, Body::from_stream(rewritten))
}

/// The rewriter's state across chunks: where it is in a string, and a number token not yet
/// ended (a chunk may end inside one).
#[derive(Default)]
pub struct Wholes {
    in_string: bool,
    escaped: bool,
    /// The last byte outside a number let a value start here (`:`, `,`, `[` or white space).
    after_delimiter: bool,
    number: Vec<u8>,
}

impl Wholes {
    /// Rewrites one chunk; a number still open at its end is held back for the next.
    pub fn feed(&mut self, input: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(input.len());
        for &b in input {
            if self.in_string {
                out.push(b);
                match b {
                    _ if self.escaped => self.escaped = false,
                    b'\\' => self.escaped = true,
                    b'"' => self.in_string = false,
                    _ => {}
                }
                continue;
            }
            if !self.number.is_empty() {
                if matches!(b, b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-') {
                    self.number.push(b);
                    continue;
                }
                self.end_number(&mut out);
            }
            if (b == b'-' || b.is_ascii_digit()) && self.after_delimiter {
                self.number.push(b);
                continue;
            }
            self.in_string = b == b'"';
            self.after_delimiter = matches!(b, b':' | b',' | b'[' | b' ' | b'\t' | b'\n' | b'\r');
            out.push(b);
        }
        out
    }

    /// The end of the body: whatever number was still open.
    pub fn finish(mut self) -> Vec<u8> {
        let mut out = Vec::new();
        self.end_number(&mut out);
        out
    }

    /// Writes the number token read so far, without its `.0` when it is a whole double.
    fn end_number(&mut self, out: &mut Vec<u8>) {
        let token = std::mem::take(&mut self.number);
        let whole = token.strip_suffix(b".0").filter(|digits| {
            let magnitude = digits.strip_prefix(b"-").unwrap_or(digits);
            // `-0.0` stays: `-0` is read as a double by some parsers, and as 0 by others.
            !magnitude.is_empty() && magnitude.iter().all(u8::is_ascii_digit) && *digits != b"-0"
        });
        out.extend_from_slice(whole.unwrap_or(&token));
        self.after_delimiter = false;
    }
}

#[cfg(test)]
mod tests {
    use super::Wholes;

    fn rewrite(chunks: &[&str]) -> String {
        let mut w = Wholes::default();
        let mut out: Vec<u8> = chunks.iter().flat_map(|c| w.feed(c.as_bytes())).collect();
        out.extend(w.finish());
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn whole_doubles_become_integers_and_nothing_else_moves() {
        let body = r#"{"n":4654.0,"v":[44.0, 0.442,-3.0,1.05,1e16,2.5e3,0.0,-0.0,10.00],"s":"4654.0 \"7.0\"","k7.0":1.0}"#;
        assert_eq!(
            rewrite(&[body]),
            r#"{"n":4654,"v":[44, 0.442,-3,1.05,1e16,2.5e3,0,-0.0,10.00],"s":"4654.0 \"7.0\"","k7.0":1}"#
        );
    }

    #[test]
    fn a_chunk_may_end_inside_a_number_or_a_string() {
        let body = r#"data: {"n":4654.0,"s":"a\"9.0"}"#;
        let whole = rewrite(&[body]);
        assert_eq!(whole, r#"data: {"n":4654,"s":"a\"9.0"}"#);
        for cut in 0..body.len() {
            assert_eq!(rewrite(&[&body[..cut], &body[cut..]]), whole, "cut at {cut}");
        }
        // A number at the very end of the body is written by `finish`.
        assert_eq!(rewrite(&["[1", "2.0"]), "[12");
        assert_eq!(rewrite(&["7.0"]), "7.0");
    }

    #[test]
    fn sse_fields_outside_json_are_left_alone() {
        let stream = "id: 3\nevent: message\ndata: {\"result\":{\"n\":12.0}}\n\n";
        assert_eq!(rewrite(&[stream]), "id: 3\nevent: message\ndata: {\"result\":{\"n\":12}}\n\n");
    }
}
