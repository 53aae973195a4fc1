//! Any bytes as an input file: detection, framing and every reader (A2A, AG-UI with MOCA, plain).
//! Never a panic, and findings stay bounded by the input's size.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let doc = recite::transcript::read_bytes("fuzz", data);
    assert!(doc.findings.len() <= data.len() + 16, "{} findings for {} bytes", doc.findings.len(), data.len());
});
