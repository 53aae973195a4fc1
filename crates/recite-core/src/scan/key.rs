//! [`JobKey`]: what makes two jobs the same computation, as a value cheap to hash and compare.
//!
//! A job is written out field by field in a canonical binary form (every float by its bits, so
//! `-0.0`, `0.0` and each NaN stay what they are; every string and sequence length-prefixed or
//! delimited, so no two different jobs write the same bytes), through `serde`, so a field added
//! to a job's types is part of its key without anyone remembering to add it.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;

use serde::Serialize;
use serde::ser;

use super::Job;
use crate::extractor::Measure;
use crate::resolve::Rows;

/// The identity of a [`Job`]: equal jobs (field for field, floats by their bits) have equal
/// keys, and different jobs different ones. Its hash is computed once; it orders by its bytes,
/// so a map of jobs by key runs them in an order that depends on the jobs alone.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct JobKey(Canonical);

impl JobKey {
    /// The key of a job.
    pub fn of(job: &Job) -> JobKey {
        JobKey::of_parts(&job.rows, &job.measures, &job.cells)
    }

    /// The key of the job these rows, measures and cells would make (the same key).
    pub fn of_parts(rows: &Rows, measures: &[Measure], cells: &[(String, String, String)]) -> JobKey {
        JobKey(Canonical::of(&(rows, measures, cells)))
    }

    /// The canonical bytes the key compares (for a persistent key derived from it).
    pub fn bytes(&self) -> &[u8] {
        &self.0.bytes
    }
}

impl Hash for JobKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.hash(state);
    }
}

impl std::fmt::Debug for JobKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "JobKey({:016x}, {} bytes)", self.0.hash, self.0.bytes.len())
    }
}

/// Any serialisable value in the canonical form [`JobKey`] uses, with its hash.
#[derive(Clone)]
pub struct Canonical {
    // Compared first: the fields' order is the derived order's.
    bytes: Arc<[u8]>,
    hash: u64,
}

impl Canonical {
    /// The canonical form of `value`.
    pub fn of<T: Serialize + ?Sized>(value: &T) -> Canonical {
        let mut out = Writer(Vec::new());
        // The writer fails on nothing; a value whose `Serialize` fails keys as its prefix plus
        // a marker no value writes.
        if value.serialize(&mut out).is_err() {
            out.0.push(FAILED);
        }
        let mut h = DefaultHasher::new();
        out.0.hash(&mut h);
        Canonical { hash: h.finish(), bytes: out.0.into() }
    }
}

impl PartialEq for Canonical {
    fn eq(&self, other: &Self) -> bool {
        self.hash == other.hash && self.bytes == other.bytes
    }
}

impl Eq for Canonical {}

impl PartialOrd for Canonical {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Canonical {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.bytes.cmp(&other.bytes)
    }
}

impl Hash for Canonical {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.hash);
    }
}

impl std::fmt::Debug for Canonical {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Canonical({:016x}, {} bytes)", self.hash, self.bytes.len())
    }
}

// One tag byte per kind of value: with lengths and end markers, every value's bytes are
// self-delimiting, so a sequence of values decodes one way only.
const BOOL: u8 = 1;
const INT: u8 = 2;
const UINT: u8 = 3;
const FLOAT: u8 = 4;
const STR: u8 = 5;
const BYTES: u8 = 6;
const NONE: u8 = 7;
const SOME: u8 = 8;
const UNIT: u8 = 9;
const VARIANT: u8 = 10;
const SEQ: u8 = 11;
const MAP: u8 = 12;
const STRUCT: u8 = 13;
const END: u8 = 14;
const FAILED: u8 = 15;

struct Writer(Vec<u8>);

/// The only error: `Serialize` implementations may make one with [`ser::Error::custom`].
#[derive(Debug)]
struct Error;

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("not serialisable")
    }
}

impl std::error::Error for Error {}

impl ser::Error for Error {
    fn custom<T: std::fmt::Display>(_: T) -> Self {
        Error
    }
}

impl Writer {
    fn tag(&mut self, t: u8) {
        self.0.push(t);
    }

    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }

    fn bytes(&mut self, tag: u8, b: &[u8]) {
        self.tag(tag);
        self.u64(b.len() as u64);
        self.0.extend_from_slice(b);
    }

    fn variant(&mut self, index: u32) {
        self.tag(VARIANT);
        self.u64(u64::from(index));
    }
}

type Res = Result<(), Error>;

impl ser::Serializer for &mut Writer {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Self;
    type SerializeTuple = Self;
    type SerializeTupleStruct = Self;
    type SerializeTupleVariant = Self;
    type SerializeMap = Self;
    type SerializeStruct = Self;
    type SerializeStructVariant = Self;

    fn serialize_bool(self, v: bool) -> Res {
        self.tag(BOOL);
        self.0.push(u8::from(v));
        Ok(())
    }
    fn serialize_i8(self, v: i8) -> Res {
        self.serialize_i64(i64::from(v))
    }
    fn serialize_i16(self, v: i16) -> Res {
        self.serialize_i64(i64::from(v))
    }
    fn serialize_i32(self, v: i32) -> Res {
        self.serialize_i64(i64::from(v))
    }
    fn serialize_i64(self, v: i64) -> Res {
        self.tag(INT);
        self.0.extend_from_slice(&v.to_le_bytes());
        Ok(())
    }
    fn serialize_i128(self, v: i128) -> Res {
        self.tag(INT);
        self.0.extend_from_slice(&v.to_le_bytes());
        Ok(())
    }
    fn serialize_u8(self, v: u8) -> Res {
        self.serialize_u64(u64::from(v))
    }
    fn serialize_u16(self, v: u16) -> Res {
        self.serialize_u64(u64::from(v))
    }
    fn serialize_u32(self, v: u32) -> Res {
        self.serialize_u64(u64::from(v))
    }
    fn serialize_u64(self, v: u64) -> Res {
        self.tag(UINT);
        self.u64(v);
        Ok(())
    }
    fn serialize_u128(self, v: u128) -> Res {
        self.tag(UINT);
        self.0.extend_from_slice(&v.to_le_bytes());
        Ok(())
    }
    fn serialize_f32(self, v: f32) -> Res {
        self.serialize_f64(f64::from(v))
    }
    fn serialize_f64(self, v: f64) -> Res {
        self.tag(FLOAT);
        self.u64(v.to_bits());
        Ok(())
    }
    fn serialize_char(self, v: char) -> Res {
        self.serialize_str(v.encode_utf8(&mut [0; 4]))
    }
    fn serialize_str(self, v: &str) -> Res {
        self.bytes(STR, v.as_bytes());
        Ok(())
    }
    fn serialize_bytes(self, v: &[u8]) -> Res {
        self.bytes(BYTES, v);
        Ok(())
    }
    fn serialize_none(self) -> Res {
        self.tag(NONE);
        Ok(())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Res {
        self.tag(SOME);
        value.serialize(self)
    }
    fn serialize_unit(self) -> Res {
        self.tag(UNIT);
        Ok(())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Res {
        self.serialize_unit()
    }
    fn serialize_unit_variant(self, _: &'static str, index: u32, _: &'static str) -> Res {
        self.variant(index);
        Ok(())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, value: &T) -> Res {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        index: u32,
        _: &'static str,
        value: &T,
    ) -> Res {
        self.variant(index);
        value.serialize(self)
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self, Error> {
        self.tag(SEQ);
        Ok(self)
    }
    fn serialize_tuple(self, _: usize) -> Result<Self, Error> {
        self.serialize_seq(None)
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Self, Error> {
        self.serialize_seq(None)
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        index: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self, Error> {
        self.variant(index);
        self.serialize_seq(None)
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self, Error> {
        self.tag(MAP);
        Ok(self)
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self, Error> {
        self.tag(STRUCT);
        Ok(self)
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        index: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self, Error> {
        self.variant(index);
        self.serialize_struct("", 0)
    }
}

/// A compound value: each element as itself, then END.
macro_rules! elements {
    ($($trait:ident::$method:ident),*) => {$(
        impl ser::$trait for &mut Writer {
            type Ok = ();
            type Error = Error;
            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Res {
                value.serialize(&mut **self)
            }
            fn end(self) -> Res {
                self.tag(END);
                Ok(())
            }
        }
    )*};
}

elements!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

impl ser::SerializeMap for &mut Writer {
    type Ok = ();
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Res {
        key.serialize(&mut **self)
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Res {
        value.serialize(&mut **self)
    }
    fn end(self) -> Res {
        self.tag(END);
        Ok(())
    }
}

// Fields by name, so one left out (`skip_serializing_if`) cannot be read as the next.
macro_rules! fields {
    ($($trait:ident),*) => {$(
        impl ser::$trait for &mut Writer {
            type Ok = ();
            type Error = Error;
            fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Res {
                self.bytes(STR, key.as_bytes());
                value.serialize(&mut **self)
            }
            fn end(self) -> Res {
                self.tag(END);
                Ok(())
            }
        }
    )*};
}

fields!(SerializeStruct, SerializeStructVariant);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resolve::Rows;

    fn job(missing: Vec<f64>) -> Job {
        let rows = Rows {
            location: "t.parquet".into(),
            table: "t".into(),
            design: None,
            period_filter: Some("wave = 5".into()),
            base_filter: None,
            column: "q1".into(),
            missing,
            missing_ranges: Vec::new(),
            weight: Some("w".into()),
            replicates: None,
        };
        Job { rows, measures: Vec::new(), cells: vec![("b".into(), "c".into(), "x = 1".into())] }
    }

    #[test]
    fn equal_jobs_have_equal_keys_and_floats_count_by_their_bits() {
        assert_eq!(JobKey::of(&job(vec![99.0])), JobKey::of(&job(vec![99.0])));
        assert_ne!(JobKey::of(&job(vec![0.0])), JobKey::of(&job(vec![-0.0])));
        // serde_json writes both as `null`: the JSON key could not tell them apart.
        assert_ne!(JobKey::of(&job(vec![f64::NAN])), JobKey::of(&job(vec![f64::INFINITY])));
        assert_eq!(JobKey::of(&job(vec![f64::NAN])), JobKey::of(&job(vec![f64::NAN])));
    }

    #[test]
    fn strings_cannot_run_into_each_other() {
        let mut a = job(vec![]);
        let mut b = job(vec![]);
        a.cells = vec![("ab".into(), "c".into(), String::new())];
        b.cells = vec![("a".into(), "bc".into(), String::new())];
        assert_ne!(JobKey::of(&a), JobKey::of(&b));
        // A missing range left out of the serialised form is not mistaken for the next field.
        b = job(vec![]);
        b.rows.missing_ranges = vec![[1.0, 2.0]];
        assert_ne!(JobKey::of(&job(vec![])), JobKey::of(&b));
    }
}
