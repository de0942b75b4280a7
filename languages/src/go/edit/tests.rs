//! Go masking tests.
