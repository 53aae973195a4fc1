//! A `study.toml` as the catalog parses it (limits, filters' size bounds, names): never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let _ = recite::catalog::Study::parse(text, std::path::Path::new("fuzz/study.toml"));
});
