//! sema
