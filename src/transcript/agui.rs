//! TODO

/// One AG-UI event, as read from a log.
#[derive(Debug, Clone)]
pub struct Event {
    /// 0-based index in the log after CHUNK expansion.
    pub index: usize,
    /// 1-based line where the event starts, for line-based logs.
    pub line: Option<usize>,
    /// The event's `type`.
    pub kind: String,
    /// The whole event object.
    pub body: serde_json::Value,
}
