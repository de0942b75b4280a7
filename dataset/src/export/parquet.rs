//! Rows as a Parquet file (`data/test.parquet`): one row group, one column per key, strings as
//! UTF-8 byte arrays and integers as INT64, no compression, so the same rows give the same
//! bytes. Written with the `parquet` crate's file writer alone (no arrow).

use parquet::data_type::{ByteArray, ByteArrayType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;
use serde_json::Value;
use std::sync::Arc;

use crate::{Error, Result};

/// The type of a column: a string or an integer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Column {
    Text,
    Integer,
}

/// `rows` (JSON objects) as Parquet, with `columns` in that order; a missing or null string
/// is empty, a missing integer 0.
pub fn write(rows: &[Value], columns: &[(&str, Column)]) -> Result<Vec<u8>> {
    let fields: Vec<String> = columns
        .iter()
        .map(|(name, c)| match c {
            Column::Text => format!("REQUIRED BYTE_ARRAY {name} (UTF8);"),
            Column::Integer => format!("REQUIRED INT64 {name};"),
        })
        .collect();
    let schema = parse_message_type(&format!("message rows {{ {} }}", fields.join(" "))).map_err(pq)?;
    let props = WriterProperties::builder().set_created_by("carve dataset export".into()).build();
    let mut writer = SerializedFileWriter::new(Vec::new(), Arc::new(schema), Arc::new(props)).map_err(pq)?;
    let mut group = writer.next_row_group().map_err(pq)?;
    let mut n = 0;
    while let Some(mut col) = group.next_column().map_err(pq)? {
        let (name, kind) = columns[n];
        match kind {
            Column::Text => {
                let values: Vec<ByteArray> = rows
                    .iter()
                    .map(|r| match &r[name] {
                        Value::String(s) => ByteArray::from(s.as_str()),
                        Value::Null => ByteArray::from(""),
                        other => ByteArray::from(other.to_string().as_str()),
                    })
                    .collect();
                col.typed::<ByteArrayType>().write_batch(&values, None, None).map_err(pq)?;
            }
            Column::Integer => {
                let values: Vec<i64> = rows.iter().map(|r| r[name].as_i64().unwrap_or(0)).collect();
                col.typed::<Int64Type>().write_batch(&values, None, None).map_err(pq)?;
            }
        }
        col.close().map_err(pq)?;
        n += 1;
    }
    group.close().map_err(pq)?;
    writer.into_inner().map_err(pq)
}

fn pq(e: parquet::errors::ParquetError) -> Error {
    Error::msg(format!("failed to write Parquet rows: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_a_parquet_file_and_the_same_rows_the_same_bytes() {
        let rows = vec![serde_json::json!({"a": "x", "n": 2}), serde_json::json!({"a": "y", "n": null})];
        let cols = [("a", Column::Text), ("n", Column::Integer)];
        let bytes = write(&rows, &cols).unwrap();
        assert!(bytes.starts_with(b"PAR1") && bytes.ends_with(b"PAR1"));
        assert_eq!(bytes, write(&rows, &cols).unwrap());
        let file = tempfile::tempfile().unwrap();
        std::io::Write::write_all(&mut &file, &bytes).unwrap();
        let reader = parquet::file::reader::SerializedFileReader::new(file).unwrap();
        use parquet::file::reader::FileReader;
        assert_eq!(reader.metadata().file_metadata().num_rows(), 2);
    }
}
