//! A2A reader, v0.3 and v1.0 (ProtoJSON) alike.
//!
//! Reading happens in passes, one submodule each, because a stream only says what an artifact
//! holds once its last chunk has arrived:
//!
//! 0. `detect`: is a value A2A, and which version; the shapes and field spellings of both;
//! 1. `walk`: walk every record (Task, Message, JSON-RPC response or request, v0.3
//!    `status-update`/`artifact-update`, v1.0 `{task}`/`{message}`/`{statusUpdate}`/
//!    `{artifactUpdate}`) into *containers* — messages and artifacts, in conversation order.
//!    A message seen twice with the same Parts (history and `status.message`, or a final Task
//!    after a stream) is kept once; the same id with other Parts is read again; an artifact chunk with `append: true` extends the artifact with its id.
//! 2. `parts`: what each Part is (text, citations by media type, shape or bytes, data, an ADK
//!    tool result), the v0.3 adapters' `{"value": …}` and gRPC/REST `{"data": …}` wrappers
//!    undone;
//! 3. `pair`: within each container, citation Parts accompany its quantitative data Parts
//!    (Upperhand: "a Part of this media type in the same result"); ADK `function_response`
//!    tool results pair with the citations inside them first.
//!
//! Both versions are read by the same code: every field is looked up under its v0.3/v1.0
//! camelCase name and its snake_case spelling, and Parts are recognised by `kind` or by which
//! content field they carry, so a file mixing conventions still reads.

use super::{Document, Finding, Format, Framed, Level, Locator};
use crate::json;

mod detect;
mod pair;
mod parts;
mod walk;

pub(crate) use detect::is_a2a_payload;
pub use detect::{looks_like_a2a, version};

/// Rule of a [`Finding`] for an A2A object of the wrong structure (e.g. `parts` not an array).
pub const RULE_A2A_MALFORMED: &str = "a2a/malformed";
/// Rule of a [`Finding`] for a JSON-RPC error response.
pub const RULE_JSONRPC_ERROR: &str = "a2a/jsonrpc-error";
/// Rule of the NOTE given when a citation was recognised by its shape, not its media type.
pub const RULE_MEDIA_TYPE: &str = "upperhand/media-type";
/// Rule of the NOTE given for a record that is JSON but no A2A object recite knows.
pub const RULE_A2A_UNRECOGNISED: &str = "a2a/unrecognised";

/// Reads `text` as A2A whatever it looks like; the version is still detected from content.
pub fn read(file: &str, text: &str) -> Document {
    let framed = super::frame(file, text);
    let format = version(framed.records.iter().map(|r| &r.value));
    read_framed(file, format, framed)
}

/// Reads already framed input as A2A of the given version (`format` is only recorded: both
/// versions are read by the same code).
pub(crate) fn read_framed(file: &str, format: Format, framed: Framed) -> Document {
    let mut doc = Document::new(file, format);
    doc.findings = framed.findings;
    let mut c = walk::Collector::new(file);
    for r in &framed.records {
        c.record(&r.value, &r.pointer, r.line);
    }
    doc.findings.append(&mut c.findings);
    let doubles = json::prints_doubles(
        c.containers
            .iter()
            .flat_map(|c| &c.parts)
            .filter_map(|p| if p.in_metadata { Some(&p.value) } else { p.value.get("data") }),
    );
    for container in &c.containers {
        pair::read_container(&mut doc, container);
    }
    if doubles {
        whole_doubles_as_written(&mut doc);
    }
    doc
}

/// Rule of the NOTE given when whole numbers written as doubles were read as integers.
pub const RULE_DOUBLES: &str = "a2a/protojson-doubles";

/// The producer printed every whole number as a double (`44.0`, `9189.0`), as ProtoJSON does
/// with `google.protobuf.Value`, which has no integers: read them as the integers the agent
/// wrote, so `44.0` claims a whole percent (±0.5) and `"n": 4654.0` is the base n 4654.
fn whole_doubles_as_written(doc: &mut Document) {
    let mut changed = false;
    for item in &mut doc.items {
        for v in item.result.iter_mut().chain(item.citation.iter_mut()) {
            let before = v.clone();
            json::whole_doubles_to_integers(v);
            changed |= *v != before;
        }
    }
    if changed {
        let message = "every whole number in this file's data Parts is written as a double (44.0), as \
                       ProtoJSON writes google.protobuf.Value: read as the integers the agent wrote";
        let at = Locator::at(&doc.file, "");
        doc.findings.push(Finding::new(at, RULE_DOUBLES, Level::Note, message));
    }
}
