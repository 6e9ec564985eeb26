//! codegen
