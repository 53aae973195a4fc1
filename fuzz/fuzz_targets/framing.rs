//! The one framing layer (SSE with any line ending, JSON lines, one document, concatenated
//! documents, arrays cut short): never a panic, and every record points inside the input.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let framed = recite::transcript::frame("fuzz", text);
    let lines = text.split(['\n', '\r']).count().max(1);
    for r in &framed.records {
        if let Some(line) = r.line {
            assert!(line >= 1 && line <= lines, "record at line {line} of {lines}");
        }
    }
});
