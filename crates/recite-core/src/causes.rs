//! An error with its causes on one line, as messages show it: `what: why: deeper why`. The
//! libraries' errors are typed (an enum per module, carrying its data) and chain their causes
//! through `source()`; this is the one place that writes the chain out, the same text anyhow's
//! `{:#}` writes at the command line.

use std::error::Error;
use std::fmt::Write as _;

/// `e`'s message followed by each of its causes', separated by `: `.
pub fn with_causes(e: &(dyn Error + 'static)) -> String {
    let mut o = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let _ = write!(o, ": {c}");
        cause = c.source();
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("reading {0}")]
    struct Reading(&'static str, #[source] std::io::Error);

    #[test]
    fn causes_follow_the_message_as_anyhow_writes_them() {
        let e = Reading("a.toml", std::io::Error::other("denied"));
        assert_eq!(with_causes(&e), "reading a.toml: denied");
        assert_eq!(
            with_causes(&e),
            format!("{:#}", anyhow::Error::new(Reading("a.toml", std::io::Error::other("denied"))))
        );
    }
}
