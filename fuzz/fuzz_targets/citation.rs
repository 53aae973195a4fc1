//! A citation Part's data, parsed and validated: never a panic, and a parsed citation always has
//! a positive base n and the required names.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) else { return };
    match recite::citation::parse(&value) {
        Ok(c) => assert!(c.base.n > 0, "a parsed citation has a positive base n"),
        Err(problems) => assert!(!problems.is_empty(), "a refusal says why"),
    }
});
