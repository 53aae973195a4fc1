//! What is said about table locations that are URLs without reaching any store: secrets hidden
//! from every message ([`redact`]), the query an HTTP client never sends ([`without_query`]),
//! the schemes recite reads and why others are refused. Object storage itself is the engine's
//! (`objstore`).

use std::borrow::Cow;

/// What a redacted part of a URL is replaced with.
pub const REDACTED: &str = "REDACTED";

/// `text` with the secrets of every URL in it hidden: the userinfo (`user:password@`), the
/// query string (a presigned URL's signature), the fragment and an http(s) URL's `;` path
/// parameters become [`REDACTED`]. Every message, report and
/// log line that may hold a table's URL goes through this one function. An `s3://`, `gs://` or
/// `az://` URL's `?` is a glob character, so its query is hidden only when it looks like one
/// (`key=value`, no `/` after it); an `http(s)://` URL's always is.
pub fn redact(text: &str) -> Cow<'_, str> {
    if !text.contains("://") {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut changed = false;
    while let Some(i) = rest.find("://") {
        let scheme_start = rest[..i]
            .char_indices()
            .rev()
            .find(|(_, c)| !(c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
            .map_or(0, |(j, c)| j + c.len_utf8());
        let scheme = rest[scheme_start..i].to_ascii_lowercase();
        let body_start = i + 3;
        // A URL runs to the first character that cannot be in one as written in a message.
        let body_len = rest[body_start..]
            .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '<' | '>' | '`' | '\\'))
            .unwrap_or(rest.len() - body_start);
        // Punctuation that ends a sentence or a `URL: why` prefix is not the URL's.
        let body_len =
            rest[body_start..body_start + body_len].trim_end_matches([':', ',', ';', ')', '.']).len();
        out.push_str(&rest[..body_start]);
        let body = &rest[body_start..body_start + body_len];
        let (hidden, did) = redact_body(&scheme, body);
        changed |= did;
        out.push_str(&hidden);
        rest = &rest[body_start + body_len..];
    }
    out.push_str(rest);
    if changed { Cow::Owned(out) } else { Cow::Borrowed(text) }
}

/// One URL after `scheme://`, redacted; and whether anything was.
fn redact_body(scheme: &str, body: &str) -> (String, bool) {
    let authority_end = body.find(['/', '?', '#']).unwrap_or(body.len());
    let (authority, path) = body.split_at(authority_end);
    let mut changed = false;
    let mut out = String::with_capacity(body.len());
    match authority.rfind('@') {
        Some(at) => {
            out.push_str(REDACTED);
            out.push_str(&authority[at..]);
            changed = true;
        }
        None => out.push_str(authority),
    }
    let web = matches!(scheme, "http" | "https");
    // Where the secrets may start: an http(s) URL's query, fragment (`#access_token=…`) or path
    // parameters (`;jsessionid=…`); elsewhere a query that looks like one, or a fragment.
    let cut = if web {
        path.find(['?', '#', ';'])
    } else {
        let query = path.find('?').filter(|&q| path[q..].contains('=') && !path[q..].contains('/'));
        let fragment = path.find('#');
        query.into_iter().chain(fragment).min()
    };
    match cut {
        Some(q) if q + 1 < path.len() => {
            out.push_str(&path[..=q]);
            out.push_str(REDACTED);
            changed = true;
        }
        _ => out.push_str(path),
    }
    (out, changed)
}

/// An `http(s)://` location without its query string and fragment, which object_store's HTTP
/// client never sends (it requests the URL's path): so a `?` there is not taken for a glob, nor
/// the query for part of the object's name. Other locations are returned as they are.
pub fn without_query(location: &str) -> Cow<'_, str> {
    let lower = location.get(..8).unwrap_or(location).to_ascii_lowercase();
    if !(lower.starts_with("http://") || lower.starts_with("https://")) {
        return Cow::Borrowed(location);
    }
    match location.find(['?', '#']) {
        Some(i) => Cow::Owned(location[..i].to_string()),
        None => Cow::Borrowed(location),
    }
}

/// The schemes a table location may use for object storage.
pub const SCHEMES: &[&str] = &["s3", "s3a", "gs", "az", "azure", "http", "https"];

/// What a URL location gets from a recite built without the `object-store` feature.
pub fn not_built(scheme: &str) -> String {
    format!(
        "is on object storage ({scheme}://), which this recite cannot read: it was built without the \
         `object-store` feature (build with `cargo build --release --features object-store`)"
    )
}

/// Why a URL location cannot be read, before any request is made.
pub fn unsupported(scheme: &str) -> String {
    match scheme {
        "file" => "is a file:// URL: write the path itself".to_string(),
        "abfs" | "abfss" | "adl" => format!(
            "is an {scheme}:// URL, which recite does not read: write az://CONTAINER/PATH, with the \
             account in AZURE_STORAGE_ACCOUNT_NAME"
        ),
        _ => format!("has the scheme {scheme}://, which recite does not read (it reads {})", {
            let s: Vec<String> = SCHEMES.iter().map(|s| format!("{s}://")).collect();
            s.join(", ")
        }),
    }
}

#[cfg(test)]
mod redaction_tests {
    use super::*;

    #[test]
    fn userinfo_and_query_strings_are_redacted_wherever_a_url_appears() {
        let text = "https://alice:s3cret@host.example/t.parquet?X-Amz-Signature=abc&X-Amz-Credential=k: \
                    cannot be read (GET https://host.example/t.parquet?sig=zzz failed)";
        let r = redact(text);
        for secret in ["alice", "s3cret", "abc", "X-Amz-Credential", "zzz"] {
            assert!(!r.contains(secret), "{secret} in {r}");
        }
        assert!(r.contains("https://REDACTED@host.example/t.parquet?REDACTED:"), "{r}");
        assert!(r.contains("GET https://host.example/t.parquet?REDACTED failed"), "{r}");
        assert_eq!(redact("s3://key:secret@bucket/k.parquet"), "s3://REDACTED@bucket/k.parquet");
        assert_eq!(redact("s3://b/k.parquet?token=t0k"), "s3://b/k.parquet?REDACTED");
        // A glob's `?` on a bucket is not a query; nothing secret, nothing changed.
        assert!(matches!(redact("s3://b/w?/part=2/x.parquet"), Cow::Borrowed(_)));
        assert!(matches!(redact("no URL here: a/b?c=d"), Cow::Borrowed(_)));
        assert_eq!(redact("\"http://u@h/x\""), "\"http://REDACTED@h/x\"");
        assert_eq!(without_query("https://h/t.parquet?X-Amz-Signature=a#f"), "https://h/t.parquet");
        // The second hostile pass: fragments and path parameters hold tokens too.
        assert_eq!(redact("http://h/t.parquet#access_token=FRAG"), "http://h/t.parquet#REDACTED");
        assert_eq!(redact("http://h/t.parquet;jsessionid=M"), "http://h/t.parquet;REDACTED");
        assert_eq!(redact("s3://b/k.parquet#SIG"), "s3://b/k.parquet#REDACTED");
        assert_eq!(
            redact("see http://u:p@h/t.parquet;x#y: gone"),
            "see http://REDACTED@h/t.parquet;REDACTED: gone"
        );
        assert_eq!(without_query("s3://b/w?.parquet"), "s3://b/w?.parquet");
    }
}
