//! Frames: rows of the JSON report, flattened into Arrow columns, handed to Python through the
//! Arrow PyCapsule interface (polars, pyarrow and pandas read them without a copy).
//!
//! Every frame is declared as a list of [`Column`]s, each a name, an Arrow type and the JSON
//! pointer of its value in a row. A row is a JSON value built from the report's own values (a
//! claim as the JSON report writes it, rounded the same way), so a frame's numbers are the
//! report's numbers and docs/python.md can say, column by column, where each comes from.

use std::sync::Arc;

use arrow_array::builder::{ListBuilder, StringBuilder};
use arrow_array::{ArrayRef, BooleanArray, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use pyo3::prelude::*;
use pyo3_arrow::PyTable;
use serde_json::{Value, json};

/// A column's Arrow type.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// UTF-8 text; a number or a boolean there is written as JSON writes it.
    Text,
    /// 64-bit float.
    Float,
    /// 64-bit integer.
    Int,
    /// Boolean.
    Bool,
    /// A list of texts.
    Texts,
}

impl Kind {
    fn data_type(self) -> DataType {
        match self {
            Kind::Text => DataType::Utf8,
            Kind::Float => DataType::Float64,
            Kind::Int => DataType::Int64,
            Kind::Bool => DataType::Boolean,
            Kind::Texts => DataType::List(Arc::new(Field::new_list_field(DataType::Utf8, true))),
        }
    }
}

/// One column: its name, type and where its value is in a row (a JSON pointer). A value that is
/// missing or null is a null.
#[derive(Debug, Clone, Copy)]
pub struct Column {
    name: &'static str,
    kind: Kind,
    pointer: &'static str,
}

/// A column declaration.
pub const fn col(name: &'static str, kind: Kind, pointer: &'static str) -> Column {
    Column { name, kind, pointer }
}

/// The rows as one record batch of `columns`.
pub fn batch(columns: &[Column], rows: &[Value]) -> RecordBatch {
    let fields: Vec<Field> = columns.iter().map(|c| Field::new(c.name, c.kind.data_type(), true)).collect();
    let arrays: Vec<ArrayRef> = columns.iter().map(|c| array(c, rows)).collect();
    RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays)
        .expect("each column is built with its declared type and one value per row")
}

/// The rows as a table Python reads through `__arrow_c_stream__`.
pub fn table(py: Python<'_>, columns: &[Column], rows: &[Value]) -> PyResult<Py<PyTable>> {
    let b = batch(columns, rows);
    let schema = b.schema();
    Py::new(py, PyTable::try_new(vec![b], schema)?)
}

fn array(c: &Column, rows: &[Value]) -> ArrayRef {
    let cells = rows.iter().map(|r| r.pointer(c.pointer).filter(|v| !v.is_null()));
    match c.kind {
        Kind::Text => Arc::new(cells.map(|v| v.map(text)).collect::<StringArray>()),
        Kind::Float => Arc::new(cells.map(|v| v.and_then(Value::as_f64)).collect::<Float64Array>()),
        Kind::Int => Arc::new(cells.map(|v| v.and_then(Value::as_i64)).collect::<Int64Array>()),
        Kind::Bool => Arc::new(cells.map(|v| v.and_then(Value::as_bool)).collect::<BooleanArray>()),
        Kind::Texts => {
            let mut b = ListBuilder::new(StringBuilder::new());
            for cell in cells {
                match cell.and_then(Value::as_array) {
                    Some(items) => {
                        items.iter().for_each(|x| b.values().append_value(text(x)));
                        b.append(true);
                    }
                    None => b.append(false),
                }
            }
            Arc::new(b.finish())
        }
    }
}

/// A value as text: a string as it is, anything else as JSON writes it.
fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// One row per item of `value[outer]` and item of its `inner` list, as `{"o": outer item, "i":
/// inner item}`; an outer item with no inner items is one row, its `i` null (a measure nobody
/// claimed still has its row).
pub fn nested_rows(value: &Value, outer: &str, inner: &str) -> Vec<Value> {
    let items = value.get(outer).and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let mut rows = Vec::new();
    for o in items {
        match o.get(inner).and_then(Value::as_array) {
            Some(xs) if !xs.is_empty() => rows.extend(xs.iter().map(|x| json!({"o": o, "i": x}))),
            _ => rows.push(json!({"o": o, "i": null})),
        }
    }
    rows
}
