//! Settling claims: claimed vs recomputed numbers → a verdict, with what the agent most likely
//! computed instead.
//!
//! - [`compare`]: one claim's numbers against the engine's outcome → a `Settlement`;
//! - [`explain`]: the nearby computations that would reproduce a claim not reproduced;
//! - [`pipeline`]: the whole path for many claims, fused per table.

pub mod compare;
pub mod explain;
pub mod pipeline;
