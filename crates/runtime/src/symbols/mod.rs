//! Symbolization in user space: kernel addresses from `/proc/kallsyms`
//! ([`Kallsyms`]), user addresses with blazesym ([`UserSymbols`], cached per
//! process). Stack frames after the first are return addresses: they are
//! looked up at `addr - 1` so that a call that ends a function still names
//! that function, and the offset shown is from the real address.

mod kallsyms;
mod user;

pub use kallsyms::Kallsyms;
pub use user::{ExitMaps, UserSymbols};

/// What an address resolved to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolvedSymbol {
    pub name: String,
    /// Bytes from the symbol's start to the address.
    pub offset: u64,
    /// The file it was found in (user space only).
    pub module: Option<String>,
}
